# SPDX-License-Identifier: CC0-1.0 (written for specbench's prompt sets; see config/tasks/smollm2/README.md)
"""A lending library: members, books, loans, fines and a few reports."""

import datetime
import json
from collections import Counter

LOAN_DAYS = 21
FINE_PER_DAY = 0.25


class Book:
    def __init__(self, isbn, title, author, copies=1):
        self.isbn = isbn
        self.title = title
        self.author = author
        self.copies = copies

    def label(self):
        return f"{self.title} by {self.author}"


class Member:
    def __init__(self, number, name, limit=5):
        self.number = number
        self.name = name
        self.limit = limit
        self.blocked = False


class Loan:
    def __init__(self, isbn, member, start, due=None):
        self.isbn = isbn
        self.member = member
        self.start = start
        self.due = due or start + datetime.timedelta(days=LOAN_DAYS)
        self.returned = None

    def is_open(self):
        return self.returned is None

    def days_late(self, today):
        end = self.returned or today
        return max((end - self.due).days, 0)

    def fine(self, today):
        return round(self.days_late(today) * FINE_PER_DAY, 2)


class Library:
    """The catalogue, the members and every loan ever made."""
    def __init__(self):
        self.books = {}
        self.members = {}
        self.loans = []

    def add_book(self, book):
        if book.isbn in self.books:
            self.books[book.isbn].copies += book.copies
        else:
            self.books[book.isbn] = book

    def join(self, member):
        if member.number in self.members:
            raise ValueError("member number in use: " + str(member.number))
        self.members[member.number] = member

    def open_loans(self, member=None):
        return [loan for loan in self.loans
                if loan.is_open() and (member is None or loan.member == member)]

    def available(self, isbn):
        out = sum(1 for loan in self.open_loans() if loan.isbn == isbn)
        return self.books[isbn].copies - out

    def lend(self, isbn, number, today):
        member = self.members[number]
        if member.blocked:
            raise PermissionError(member.name + " is blocked")
        if len(self.open_loans(number)) >= member.limit:
            raise PermissionError(member.name + " has reached the loan limit")
        if self.available(isbn) <= 0:
            raise LookupError("no copy of " + self.books[isbn].label() + " is free")
        loan = Loan(isbn, number, today)
        self.loans.append(loan)
        return loan

    def give_back(self, isbn, number, today):
        for loan in self.open_loans(number):
            if loan.isbn == isbn:
                loan.returned = today
                return loan.fine(today)
        raise LookupError("no open loan of " + isbn + " for member " + str(number))

    def overdue(self, today):
        return sorted((loan for loan in self.open_loans() if loan.days_late(today) > 0),
                      key=lambda loan: loan.due)

    def fines_owed(self, today):
        owed = Counter()
        for loan in self.loans:
            owed[loan.member] += loan.fine(today)
        return {number: round(total, 2) for number, total in owed.items() if total > 0}

    def popular(self, count=5):
        tally = Counter(loan.isbn for loan in self.loans)
        return [(self.books[isbn].label(), n) for isbn, n in tally.most_common(count)]


def load_catalogue(path):
    with open(path, encoding="utf-8") as handle:
        rows = json.load(handle)
    return [Book(row["isbn"], row["title"], row["author"], row.get("copies", 1)) for row in rows]


def save_loans(path, library):
    rows = []
    for loan in library.loans:
        rows.append({"isbn": loan.isbn, "member": loan.member, "start": loan.start.isoformat(),
                     "due": loan.due.isoformat(),
                     "returned": loan.returned.isoformat() if loan.returned else None})
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(rows, handle, indent=2)


def overdue_report(library, today):
    lines = []
    for loan in library.overdue(today):
        member = library.members[loan.member]
        book = library.books[loan.isbn]
        lines.append(f"{member.name:<16} {book.title:<28} {loan.days_late(today):>3} days  {loan.fine(today):>6.2f}")
    return lines


if __name__ == "__main__":
    library = Library()
    library.add_book(Book("978-0", "The Quiet Harbour", "A. Lindqvist", copies=2))
    library.join(Member(1, "Ines"))
    start = datetime.date(2026, 1, 5)
    library.lend("978-0", 1, start)
    print("\n".join(overdue_report(library, start + datetime.timedelta(days=30))))
