"""Machine-readable results: one JSON object per measurement.

Every measurement carries at least bench, config, case, metric and value,
plus the parameters that identify the point (row id, stored size, bucket).
Lines are appended as they are measured, so an interrupted run keeps what
it had.
"""

import json


class Results:
    """defaults: parameters every line added carries (a run's wal_level
    when it is not replica).  path None: in memory only (subset())."""

    def __init__(self, path, rows=None, defaults=None):
        self.path = path
        self.rows = rows or []
        self.defaults = defaults or {}
        if rows is None and path is not None:
            open(path, "w").close()

    @classmethod
    def load(cls, path, defaults=None):
        with open(path) as f:
            return cls(path, [json.loads(line) for line in f if line.strip()],
                       defaults)

    def add(self, bench, config, case, metric, value, **params):
        row = {"bench": bench, "config": config, "case": case,
               "metric": metric, "value": value}
        row.update(self.defaults)
        row.update(params)
        self.rows.append(row)
        if self.path is not None:
            with open(self.path, "a") as f:
                f.write(json.dumps(row) + "\n")

    def subset(self, keep):
        """The lines for which keep(line) is true, in memory."""
        return Results(None, [r for r in self.rows if keep(r)])

    def at_wal_level(self, level):
        """The lines measured at a wal_level (lines without one: replica)."""
        return self.subset(lambda r: r.get("wal_level", "replica") == level)

    def select(self, **match):
        return [r for r in self.rows
                if all(r.get(k) == v for k, v in match.items())]

    def one(self, **match):
        rows = self.select(**match)
        if len(rows) != 1:
            raise KeyError(f"{len(rows)} results for {match}")
        return rows[0]["value"]
