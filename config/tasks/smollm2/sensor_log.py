# SPDX-License-Identifier: CC0-1.0 (written for specbench's prompt sets; see config/tasks/smollm2/README.md)
"""Readings from a few sensors: parsing a log, cleaning it, and daily summaries."""

import csv
import math
import statistics
from collections import defaultdict
from datetime import datetime

UNITS = {"temp": "C", "humidity": "%", "pressure": "hPa"}


class Reading:
    def __init__(self, sensor, kind, value, when):
        self.sensor = sensor
        self.kind = kind
        self.value = value
        self.when = when

    def day(self):
        return self.when.date().isoformat()

    def unit(self):
        return UNITS.get(self.kind, "")


def parse_line(line):
    parts = line.strip().split(";")
    if len(parts) != 4:
        return None
    stamp, sensor, kind, raw = parts
    try:
        value = float(raw)
    except ValueError:
        return None
    if math.isnan(value):
        return None
    return Reading(sensor, kind, value, datetime.fromisoformat(stamp))


def read_log(path):
    readings = []
    skipped = 0
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if not line.strip() or line.startswith("#"):
                continue
            reading = parse_line(line)
            if reading is None:
                skipped += 1
            else:
                readings.append(reading)
    return readings, skipped


class SensorLog:
    """Readings grouped by sensor and kind, with the checks a dashboard needs."""
    def __init__(self, readings=()):
        self.series = defaultdict(list)
        for reading in readings:
            self.add(reading)

    def add(self, reading):
        self.series[(reading.sensor, reading.kind)].append(reading)

    def sensors(self):
        return sorted({sensor for sensor, _ in self.series})

    def latest(self, sensor, kind):
        values = self.series.get((sensor, kind), [])
        return max(values, key=lambda r: r.when) if values else None

    def outliers(self, sensor, kind, limit=3.0):
        values = [r.value for r in self.series.get((sensor, kind), [])]
        if len(values) < 3:
            return []
        mean = statistics.fmean(values)
        spread = statistics.pstdev(values)
        if spread == 0:
            return []
        return [r for r in self.series[(sensor, kind)] if abs(r.value - mean) / spread > limit]

    def without_outliers(self, limit=3.0):
        cleaned = SensorLog()
        for (sensor, kind), readings in self.series.items():
            bad = set(id(r) for r in self.outliers(sensor, kind, limit))
            for reading in readings:
                if id(reading) not in bad:
                    cleaned.add(reading)
        return cleaned

    def daily(self, kind):
        days = defaultdict(list)
        for (sensor, own_kind), readings in self.series.items():
            if own_kind != kind:
                continue
            for reading in readings:
                days[(reading.day(), sensor)].append(reading.value)
        rows = []
        for (day, sensor), values in sorted(days.items()):
            rows.append({"day": day, "sensor": sensor, "min": min(values), "max": max(values),
                         "mean": round(statistics.fmean(values), 2), "count": len(values)})
        return rows

    def gaps(self, sensor, kind, minutes=30):
        readings = sorted(self.series.get((sensor, kind), []), key=lambda r: r.when)
        found = []
        for before, after in zip(readings, readings[1:]):
            pause = (after.when - before.when).total_seconds() / 60
            if pause > minutes:
                found.append((before.when, after.when, round(pause)))
        return found


def write_daily(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=["day", "sensor", "min", "max", "mean", "count"])
        writer.writeheader()
        writer.writerows(rows)


def status_lines(log):
    lines = []
    for sensor in log.sensors():
        parts = []
        for kind in sorted(UNITS):
            reading = log.latest(sensor, kind)
            if reading is not None:
                parts.append(f"{kind} {reading.value:.1f} {reading.unit()}")
        lines.append(f"{sensor:<10} " + ", ".join(parts))
    return lines


if __name__ == "__main__":
    sample = ["2026-03-01T08:00:00;roof;temp;4.5", "2026-03-01T09:00:00;roof;temp;6.0", "bad line"]
    log = SensorLog(r for r in map(parse_line, sample) if r is not None)
    print("\n".join(status_lines(log)))
    print(log.daily("temp"))
