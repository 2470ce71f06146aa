from trustgate.cli import main

raise SystemExit(main())
