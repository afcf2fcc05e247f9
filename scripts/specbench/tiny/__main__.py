"""``python -m specbench.tiny``: write a tiny checkpoint (see ``checkpoints.main``)."""

from .checkpoints import main

raise SystemExit(main())
