"""Every change to user groups, by sub-domain (import from the module that defines the name):

- `system_groups`: the groups every organization has, kept in step with roles and activity;
- `groups`: user-defined groups created, renamed, described, deactivated and reactivated;
- `members`: members and subgroups added and removed, and who may do it;
- `settings`: group-valued settings, of groups here and of channels and the organization alike;
- `reporting`: the events and audit entries the others share.

Every event goes to the organization's active users; every change is recorded in the audit log
(apps.realms.audit) in its transaction.
"""
