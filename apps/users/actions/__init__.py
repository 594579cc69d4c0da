"""Every change to users, bots, API keys, settings and custom profile fields, by sub-domain (import
each name from the module that defines it): create_user, create_realm, user_settings (a user's
attributes: name, email, API key, ...), settings (PATCH /settings: the user settings), credentials
(one's own password and email change), realm_defaults (organizations' defaults for new users),
roles, activation, profile_fields (definitions), profile_data (users' values); notify sends their
events."""
