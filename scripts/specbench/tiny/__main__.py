"""``python -m specbench.tiny``: write a tiny checkpoint (see ``checkpoints.main``)."""

from specbench.tiny.checkpoints import main

raise SystemExit(main())
