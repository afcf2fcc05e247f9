"""What the workflow plans from a validated config, known before anything runs: the cells and their
paths, each model's identity, each rule's resources and names, and the code each rule runs."""
