"""attrib-audit: does an attribution metric's quality transfer across datasets?"""
from __future__ import annotations

__version__ = "0.1.0"
