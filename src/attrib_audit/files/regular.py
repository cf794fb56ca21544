"""Opening a file attrib-audit keeps in its home (or a model folder) as what it claims to be: a regular file.

A FIFO there would block `open()` forever, a folder or device is no cache entry, and a planted file may be huge:
`open_regular` opens without blocking (O_NONBLOCK), checks with fstat that it is a regular file, and only then hands
it over; `read_regular` also caps its size. Both raise OSError, which every caller already treats as "no entry".
"""
from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO


class NotRegularFile(OSError):
    """The path is a FIFO, folder, device or socket, or larger than the caller accepts."""


def open_regular(path: str | Path) -> BinaryIO:
    """The file opened for binary reading, once fstat says it is a regular file.

    Raises:
        NotRegularFile: it is something else.
        OSError: it cannot be opened.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(f"{path} is not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | Path, max_bytes: int) -> bytes:
    """The whole content of a regular file of at most `max_bytes` bytes.

    Raises:
        NotRegularFile: not a regular file, or larger than `max_bytes`.
        OSError: it cannot be read.
    """
    with open_regular(path) as fh:
        if os.fstat(fh.fileno()).st_size > max_bytes:
            raise NotRegularFile(f"{path} is larger than {max_bytes} bytes")
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:  # it grew while read
        raise NotRegularFile(f"{path} is larger than {max_bytes} bytes")
    return data
