"""``import redis_lock`` as ``redis_recipes.drop_in.redis_lock``: this
directory goes first on ``PYTHONPATH`` when python-redis-lock's own tests
run against the drop-in (test_drop_in_redis_lock_suite.py), so its tests and
the helper processes they start import the drop-in under the library's
name."""

import sys

from redis_recipes.drop_in import redis_lock

sys.modules[__name__] = redis_lock
