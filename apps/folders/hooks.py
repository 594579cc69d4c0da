"""Hooks the folders app calls (see apps/core/hooks.py); higher apps register with them."""

from apps.core.hooks import Hooks

# folder_in_use(folder) -> bool: whether channels (archived ones too) are in the folder
# (apps.subscriptions), which keeps it from being archived (Zulip's check_channel_folder_in_use).
folder_in_use = Hooks("folder_in_use")
