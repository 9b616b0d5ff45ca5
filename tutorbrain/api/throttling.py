"""Requests per API key (DRF's throttling on the shared Redis cache).

The count lives in Django's cache (Redis, settings.CACHES), so it is one count across
every web process and server. The rate is TUTORBRAIN_API_RATE; past it the API answers
429 with a Retry-After header. Requests without a valid key are not counted here (they
are refused before any work is done).
"""

from __future__ import annotations

import logging

from django.conf import settings
from redis.exceptions import RedisError
from rest_framework.throttling import SimpleRateThrottle

from memory.models import ApiKey

logger = logging.getLogger(__name__)


class ApiKeyRateThrottle(SimpleRateThrottle):
    scope = "api_key"

    def get_rate(self):
        # Read from the settings at each request (DRF's own lookup is fixed at import).
        return settings.TUTORBRAIN_API_RATE

    def get_cache_key(self, request, view):
        key = request.auth
        if not isinstance(key, ApiKey):
            return None
        # The key's hash, not its row id: ids restart with a new database, a hash does
        # not, so a count left in Redis never lands on another key.
        return self.cache_format % {"scope": self.scope, "ident": key.key_hash[:32]}

    def allow_request(self, request, view):
        try:
            return super().allow_request(request, view)
        except RedisError:
            # Fail open: an unreachable cache must not take the memory block down with
            # it; the readiness check reports the cache as failing.
            logger.warning("throttling skipped: the cache does not answer", exc_info=True)
            return True
