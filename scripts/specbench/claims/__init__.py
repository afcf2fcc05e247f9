"""Claims: the study's published figures and the user's predictions as data (model, load: pandas-free, checked at
parse time), judged on one run's tables (tables, judges, evaluate); predictions stamped before measuring."""
