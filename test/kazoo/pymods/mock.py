"""Stand-in for the third-party "mock" package, which kazoo's tests import
but Debian's python3-kazoo does not pull in: the same API has been in the
standard library as unittest.mock since Python 3.3."""

from unittest.mock import *  # noqa: F401,F403
