"""Reports people look at, drawn from saved results only: `build` writes the self-contained HTML, the Markdown and
the plots (matplotlib, imported only there); `console` is the one renderer of every table a command prints.
Neither recomputes a statistic."""
