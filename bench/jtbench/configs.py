"""Benchmark configurations (docs/benchmarks.md).

A configuration decides how a table's jsonb column is stored (compression
method, the toaster or standard TOAST) and how a session reads it (builtin
accessors, the extension's partial-access ones through search_path, or the
builtins served by the extension's accessors through the override).

On a patched server with the library preloaded, the builtin accessors
(->, ->>, #>, #>>, ?, ?|, ?&) are served by the extension's accessors
unless the session sets jsonb_toaster.override_builtins = off.  So:

- stock-*: sessions (readers and writers) run with the overrides off: the
  builtins' own code on standard TOAST, the PostgreSQL of today;
- partial-*: overrides off too, and search_path puts the extension's
  operators before pg_catalog's: exactly the explicit opt-in, on the stock
  tables;
- toaster-*: tables of their own whose jsonb column is opted in to the
  toaster (SET (toaster = 'jsonb_toaster')), read with the overrides on.

Configurations that store data the same way share the read-only tables of
S and I; the benchmarks that modify their tables (U, P) give each
configuration its own.

A configuration is checked before it is measured, so that a broken set-up
fails the run instead of silently measuring something else: in one of its
sessions, -> must resolve to the expected function and
jsonb_toaster.override_builtins must have the expected value; a toaster
configuration needs a server with the toaster hooks.  After each load, the
storage of the table is checked too (check_storage): a toaster table must
hold no document in standard TOAST (every TOASTed document is a skeleton),
a standard table no skeleton.
"""

from . import db

OVERRIDES_OFF = "-c jsonb_toaster.override_builtins=off"
OVERRIDES_ON = "-c jsonb_toaster.override_builtins=on"
# The extension is created in public; putting public before pg_catalog makes
# its operators shadow the builtin ones for that session only.
PARTIAL = "-c search_path=public,pg_catalog " + OVERRIDES_OFF


def shared_tables(configs, prefix):
    """The read-only tables named prefix that these configurations read,
    each once, with the configuration whose sessions load it: a list of
    (table, owner), in the order of configs."""
    owners = {}
    for cfg in configs:
        owners.setdefault(cfg.table(prefix, shared=True), cfg.owner())
    return list(owners.items())


def forms_text(forms):
    """Rows per storage form (from check_storage), for the log."""
    return ", ".join(f"{n} {f}" for f, n in forms.items())


class Config:
    def __init__(self, name, compression, session_options, overrides, baseline=None,
                 data_of=None, expect_opfunc="jsonb_object_field", toaster=False):
        self.name = name
        self.compression = compression
        self.session_options = session_options  # PGOPTIONS for readers and writers
        self.overrides = overrides              # expected override_builtins
        self.baseline = baseline                # configuration compared with
        self.data_of = data_of or name          # whose read-only tables it uses
        self.expect_opfunc = expect_opfunc      # what -> must resolve to
        self.toaster = toaster                  # column opted in to the toaster

    def table(self, prefix, shared=False):
        owner = self.data_of if shared else self.name
        return f"{prefix}_{owner.replace('-', '_')}"

    def owner(self):
        """The configuration whose tables this one reads (itself, or the
        stock configuration for a partial one); its sessions load them."""
        return ALL[self.data_of]

    def column(self, name="jb", storage=None):
        """Column definition of the jsonb column in this configuration."""
        col = f"{name} jsonb"
        if storage:
            col += f" STORAGE {storage}"
        return col + f" COMPRESSION {self.compression}"

    def create_table(self, table, columns, jsonb_column="jb"):
        """SQL that (re)creates a table of this configuration: columns is
        the column list, which must include the jsonb column (made with
        column()); a toaster configuration opts that column in."""
        sql = f"DROP TABLE IF EXISTS {table}; CREATE TABLE {table} ({columns});"
        if self.toaster:
            sql += (f" ALTER TABLE {table} ALTER COLUMN {jsonb_column} "
                    f"SET (toaster = 'jsonb_toaster');")
        return sql

    def execute(self, sql):
        """Run statements in a session of this configuration (writers)."""
        db.execute(sql, self.session_options)

    def check(self):
        opts = self.session_options
        opfunc = db.value("SELECT oprcode::text FROM pg_operator "
                          "WHERE oid = to_regoperator('->(jsonb,text)')", opts)
        if opfunc != self.expect_opfunc:
            raise SystemExit(f"configuration {self.name}: -> resolves to {opfunc}, "
                             f"expected {self.expect_opfunc}")
        overrides = db.value("SHOW jsonb_toaster.override_builtins", opts)
        if overrides != self.overrides:
            raise SystemExit(f"configuration {self.name}: jsonb_toaster.override_builtins "
                             f"is {overrides} in its sessions, expected {self.overrides}")
        if self.toaster and db.value("SELECT jsonb_toaster_custom_toast()") != "t":
            raise SystemExit(f"configuration {self.name}: the server has no custom "
                             f"TOAST hooks (jsonb_toaster_custom_toast() is false)")

    def check_storage(self, table, column="jb", expect_skeleton=True):
        """Check how a loaded table stores its documents; return the number
        of rows per storage form.

        Toaster configuration: no document may be in standard TOAST
        (form 'external': the toaster declined or was bypassed), and with
        expect_skeleton at least one must be a skeleton.  Other
        configurations: no skeleton."""
        forms = dict((f, int(n)) for f, n in db.query(
            f"SELECT s.form, count(*) FROM {table}, jsonb_toaster_storage({column}) s "
            f"GROUP BY s.form ORDER BY s.form", self.session_options))
        desc = forms_text(forms)
        if self.toaster:
            if forms.get("external", 0):
                raise SystemExit(f"configuration {self.name}: {table}.{column} has "
                                 f"{forms['external']} documents in standard TOAST, "
                                 f"not stored by the toaster ({desc})")
            if expect_skeleton and not forms.get("skeleton", 0):
                raise SystemExit(f"configuration {self.name}: {table}.{column} holds no "
                                 f"skeleton ({desc})")
        elif forms.get("skeleton", 0):
            raise SystemExit(f"configuration {self.name}: {table}.{column} holds "
                             f"{forms['skeleton']} skeletons ({desc})")
        return forms


ALL = {
    "stock-pglz": Config("stock-pglz", "pglz", OVERRIDES_OFF, "off"),
    "stock-lz4": Config("stock-lz4", "lz4", OVERRIDES_OFF, "off"),
    "partial-pglz": Config("partial-pglz", "pglz", PARTIAL, "off", baseline="stock-pglz",
                           data_of="stock-pglz", expect_opfunc="jt_object_field"),
    "partial-lz4": Config("partial-lz4", "lz4", PARTIAL, "off", baseline="stock-lz4",
                          data_of="stock-lz4", expect_opfunc="jt_object_field"),
    "toaster-pglz": Config("toaster-pglz", "pglz", OVERRIDES_ON, "on", baseline="stock-pglz",
                           toaster=True),
    "toaster-lz4": Config("toaster-lz4", "lz4", OVERRIDES_ON, "on", baseline="stock-lz4",
                          toaster=True),
}

DEFAULT = ["stock-pglz", "stock-lz4", "partial-pglz", "partial-lz4",
           "toaster-pglz", "toaster-lz4"]


def select(names):
    unknown = [n for n in names if n not in ALL]
    if unknown:
        raise SystemExit(f"unknown configuration(s): {', '.join(unknown)}; "
                         f"available: {', '.join(ALL)}")
    return [ALL[n] for n in names]
