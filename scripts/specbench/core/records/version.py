"""The cell record's version: the one number the cell runner writes (measure.cell_record) and the table and the
imports read (analysis.record_reader reads every readable version as this one and says how each older one differs).
A change of the record's format raises it."""

RECORD_VERSION = 10
