"""Stand-in for the third-party "objgraph" package, which kazoo's
test_cache.py imports for one function, count(typename)."""

import gc


def count(typename, objects=None):
    """Number of live objects whose type is named typename (a short name,
    or module.qualname when it contains a dot), as objgraph.count does."""
    if objects is None:
        objects = gc.get_objects()
    if "." in typename:
        return sum(1 for o in objects if "%s.%s" % (type(o).__module__, type(o).__qualname__) == typename)
    return sum(1 for o in objects if type(o).__name__ == typename)
