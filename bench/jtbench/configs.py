"""Benchmark configurations (BENCHMARKS.md).

A configuration decides how a table's jsonb column is stored (compression
method, later the toaster) and how a session reads it (builtin accessors, or
the extension's partial-access ones through search_path).  Configurations
that need a feature this server or extension does not have are reported as
unavailable instead of silently measuring something else.
"""


class Config:
    def __init__(self, name, compression, session_options="", column_options=""):
        self.name = name
        self.compression = compression
        self.session_options = session_options  # PGOPTIONS for readers
        self.column_options = column_options    # extra column clauses

    @property
    def ident(self):
        return self.name.replace("-", "_")

    def table(self, prefix):
        return f"{prefix}_{self.ident}"

    def column(self, name="jb", storage=None):
        """Column definition of the jsonb column in this configuration."""
        col = f"{name} jsonb"
        if storage:
            col += f" STORAGE {storage}"
        return col + f" COMPRESSION {self.compression}"


ALL = {
    "stock-pglz": Config("stock-pglz", "pglz"),
    "stock-lz4": Config("stock-lz4", "lz4"),
}

DEFAULT = ["stock-pglz", "stock-lz4"]


def select(names):
    unknown = [n for n in names if n not in ALL]
    if unknown:
        raise SystemExit(f"unknown or not yet available configuration(s): {', '.join(unknown)}; "
                         f"available: {', '.join(ALL)}")
    return [ALL[n] for n in names]
