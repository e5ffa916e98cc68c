from rcpkit.cli import main

raise SystemExit(main())
