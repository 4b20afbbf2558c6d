"""Machine-readable results: one JSON object per measurement.

Every measurement carries at least bench, config, case, metric and value,
plus the parameters that identify the point (row id, stored size, bucket).
Lines are appended as they are measured, so an interrupted run keeps what
it had.
"""

import json


class Results:
    def __init__(self, path, rows=None):
        self.path = path
        self.rows = rows or []
        if rows is None:
            open(path, "w").close()

    @classmethod
    def load(cls, path):
        with open(path) as f:
            return cls(path, [json.loads(line) for line in f if line.strip()])

    def add(self, bench, config, case, metric, value, **params):
        row = {"bench": bench, "config": config, "case": case,
               "metric": metric, "value": value}
        row.update(params)
        self.rows.append(row)
        with open(self.path, "a") as f:
            f.write(json.dumps(row) + "\n")

    def select(self, **match):
        return [r for r in self.rows
                if all(r.get(k) == v for k, v in match.items())]

    def one(self, **match):
        rows = self.select(**match)
        if len(rows) != 1:
            raise KeyError(f"{len(rows)} results for {match}")
        return rows[0]["value"]
