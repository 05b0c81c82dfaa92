"""``python -m lit3r.cli``: the ``lit3r`` command."""

from lit3r.cli import main

main()
