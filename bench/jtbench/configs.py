"""Benchmark configurations (BENCHMARKS.md).

A configuration decides how a table's jsonb column is stored (compression
method, later the toaster) and how a session reads it (builtin accessors, or
the extension's partial-access ones through search_path).  Configurations
that store data the same way share the read-only tables of S and I; the
benchmarks that modify their tables (U, P) give each configuration its own.

A configuration is checked before it is measured: a partial-access session
must really resolve -> to the extension's function, so that a broken
opt-in fails the run instead of silently measuring the builtins.
"""

from . import db


class Config:
    def __init__(self, name, compression, session_options="", baseline=None,
                 data_of=None, expect_opfunc="jsonb_object_field"):
        self.name = name
        self.compression = compression
        self.session_options = session_options  # PGOPTIONS for readers
        self.baseline = baseline                # configuration compared with
        self.data_of = data_of or name          # whose read-only tables it uses
        self.expect_opfunc = expect_opfunc      # what -> must resolve to

    def table(self, prefix, shared=False):
        owner = self.data_of if shared else self.name
        return f"{prefix}_{owner.replace('-', '_')}"

    def column(self, name="jb", storage=None):
        """Column definition of the jsonb column in this configuration."""
        col = f"{name} jsonb"
        if storage:
            col += f" STORAGE {storage}"
        return col + f" COMPRESSION {self.compression}"

    def check(self):
        opfunc = db.value("SELECT oprcode::text FROM pg_operator "
                          "WHERE oid = to_regoperator('->(jsonb,text)')",
                          self.session_options)
        if opfunc != self.expect_opfunc:
            raise SystemExit(f"configuration {self.name}: -> resolves to {opfunc}, "
                             f"expected {self.expect_opfunc}")


# The extension is created in public; putting public before pg_catalog makes
# its operators shadow the builtin ones for that session only.
PARTIAL = "-c search_path=public,pg_catalog"

ALL = {
    "stock-pglz": Config("stock-pglz", "pglz"),
    "stock-lz4": Config("stock-lz4", "lz4"),
    "partial-pglz": Config("partial-pglz", "pglz", PARTIAL, baseline="stock-pglz",
                           data_of="stock-pglz", expect_opfunc="jt_object_field"),
    "partial-lz4": Config("partial-lz4", "lz4", PARTIAL, baseline="stock-lz4",
                          data_of="stock-lz4", expect_opfunc="jt_object_field"),
}

DEFAULT = ["stock-pglz", "stock-lz4", "partial-pglz", "partial-lz4"]


def select(names):
    unknown = [n for n in names if n not in ALL]
    if unknown:
        raise SystemExit(f"unknown or not yet available configuration(s): {', '.join(unknown)}; "
                         f"available: {', '.join(ALL)}")
    return [ALL[n] for n in names]
