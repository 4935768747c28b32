from qtop.cli import main

raise SystemExit(main())
