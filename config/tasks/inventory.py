"""A small inventory ledger: items, stock movements and simple reports."""

import csv
import datetime
import json
from collections import defaultdict


class Item:
    def __init__(self, sku, name, unit_price, reorder_level=0):
        self.sku = sku
        self.name = name
        self.unit_price = unit_price
        self.reorder_level = reorder_level

    def to_dict(self):
        return {
            "sku": self.sku,
            "name": self.name,
            "unit_price": self.unit_price,
            "reorder_level": self.reorder_level,
        }

    @classmethod
    def from_dict(cls, data):
        return cls(
            data["sku"], data["name"],
            float(data["unit_price"]), int(data.get("reorder_level", 0))
        )


class Movement:
    def __init__(self, sku, quantity, when=None, note=""):
        self.sku = sku
        self.quantity = quantity
        self.when = when or datetime.date.today()
        self.note = note

    def is_receipt(self):
        return self.quantity > 0

    def to_row(self):
        return [self.sku, self.quantity, self.when.isoformat(), self.note]


class Ledger:
    """Items and the stock movements recorded against them."""
    def __init__(self):
        self.items = {}
        self.movements = []

    def add_item(self, item):
        if item.sku in self.items:
            raise ValueError("duplicate sku: " + item.sku)
        self.items[item.sku] = item

    def record(self, sku, quantity, when=None, note=""):
        if sku not in self.items:
            raise KeyError(sku)
        if quantity == 0:
            raise ValueError("a movement needs a non-zero quantity")
        movement = Movement(sku, quantity, when, note)
        self.movements.append(movement)
        return movement

    def stock(self, sku):
        return sum(m.quantity for m in self.movements if m.sku == sku)

    def stock_levels(self):
        levels = defaultdict(int)
        for movement in self.movements:
            levels[movement.sku] += movement.quantity
        return {sku: levels.get(sku, 0) for sku in self.items}

    def value(self):
        total = 0.0
        for sku, quantity in self.stock_levels().items():
            total += quantity * self.items[sku].unit_price
        return round(total, 2)

    def to_reorder(self):
        result = []
        for sku, quantity in sorted(self.stock_levels().items()):
            if quantity <= self.items[sku].reorder_level:
                result.append((sku, quantity, self.items[sku].reorder_level))
        return result

    def busiest_items(self, count=3):
        activity = defaultdict(int)
        for movement in self.movements:
            activity[movement.sku] += abs(movement.quantity)
        ranked = sorted(activity.items(), key=lambda pair: (-pair[1], pair[0]))
        return ranked[:count]


def load_items(path):
    with open(path, encoding="utf-8") as handle:
        return [Item.from_dict(entry) for entry in json.load(handle)]


def save_items(path, items):
    with open(path, "w", encoding="utf-8") as handle:
        json.dump([item.to_dict() for item in items], handle, indent=2)


def export_movements(path, ledger):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["sku", "quantity", "date", "note"])
        for movement in ledger.movements:
            writer.writerow(movement.to_row())


def summary_lines(ledger):
    lines = []
    for sku, quantity in sorted(ledger.stock_levels().items()):
        item = ledger.items[sku]
        lines.append(f"{sku:<8} {item.name:<20} {quantity:>6} @ {item.unit_price:>8.2f}")
    lines.append(f"{'total value':<29} {ledger.value():>17.2f}")
    return lines


if __name__ == "__main__":
    ledger = Ledger()
    ledger.add_item(Item("A-100", "bolts", 0.12, reorder_level=500))
    ledger.add_item(Item("B-200", "washers", 0.05, reorder_level=1000))
    ledger.record("A-100", 1200, note="opening stock")
    ledger.record("B-200", 800, note="opening stock")
    ledger.record("A-100", -300, note="order 17")
    print("\n".join(summary_lines(ledger)))
