from attrib_audit.cli import main

raise SystemExit(main())
