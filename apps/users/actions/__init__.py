"""Every change to users, bots, API keys and custom profile fields, by sub-domain (import each
name from the module that defines it): create_user, create_realm, user_settings, roles,
activation, profile_fields (definitions), profile_data (users' values); notify sends their events."""
