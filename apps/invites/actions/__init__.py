"""Every change the invites app makes, by sub-domain (import each name from the module that defines
it): invites (reusable invitation links), signup (joining through a link), welcome (the Welcome Bot
and its message)."""
