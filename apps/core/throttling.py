"""REST framework's throttle for the API: the general rate limit over apps.core.ratelimit.

RATE_LIMIT_API_BY_USER per authenticated user, RATE_LIMIT_API_BY_IP per address for anonymous
requests and failed authentications; with Redis, counted in one place for every server process.
"""

from rest_framework.throttling import BaseThrottle

from apps.core.api import count_api_request


class ApiRateThrottle(BaseThrottle):
    def allow_request(self, request, view) -> bool:
        self.state = count_api_request(request._request, request.user)
        return self.state is None or not self.state.blocked

    def wait(self) -> float | None:
        return self.state.retry_after if self.state is not None else None
