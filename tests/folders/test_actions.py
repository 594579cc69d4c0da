"""The channel folder actions: names taken meanwhile, archived folders' names, and moving a folder."""

import pytest

from apps.folders.actions import (
    check_add_channel_folder,
    check_update_channel_folder,
    do_add_channel_folder,
    do_move_channel_folder,
    do_set_channel_folder_archived,
)
from apps.folders.errors import ChannelFolderNameInUseError
from apps.folders.models import ChannelFolder


def add(realm, name: str) -> ChannelFolder:
    return check_add_channel_folder(realm, name=name, description="", acting_user=None)


def test_a_name_taken_meanwhile_is_refused_by_the_database(realm, other_realm):
    add(realm, "Taken")
    # As if another request had created it between the check and the write.
    with pytest.raises(ChannelFolderNameInUseError):
        do_add_channel_folder(realm, name="TAKEN", description="", acting_user=None)
    # The caller's transaction is still usable, and other organizations have their own names.
    assert do_add_channel_folder(other_realm, name="Taken", description="", acting_user=None).realm_id == other_realm.id
    assert ChannelFolder.objects.filter(realm=realm).count() == 1


def test_an_archived_folder_may_take_a_name_in_use_but_not_come_back_with_it(realm):
    add(realm, "Design")
    old = add(realm, "Old")
    do_set_channel_folder_archived(old, True, acting_user=None)
    check_update_channel_folder(old, name="design", acting_user=None)
    assert ChannelFolder.objects.get(id=old.id).name == "design"
    with pytest.raises(ChannelFolderNameInUseError):
        check_update_channel_folder(old, is_archived=False, acting_user=None)
    with pytest.raises(ChannelFolderNameInUseError):
        check_update_channel_folder(old, name="DESIGN", is_archived=False, acting_user=None)
    old.refresh_from_db()
    assert (old.name, old.is_archived) == ("design", True)


def test_moving_a_folder_numbers_them_again(realm):
    a, b, c = add(realm, "A"), add(realm, "B"), add(realm, "C")
    do_move_channel_folder(c, -5, acting_user=None)
    assert list(ChannelFolder.objects.order_by("order").values_list("id", "order")) == [(c.id, 0), (a.id, 1), (b.id, 2)]
    do_move_channel_folder(a, 10, acting_user=None)
    assert list(ChannelFolder.objects.order_by("order").values_list("id", flat=True)) == [c.id, b.id, a.id]
    assert add(realm, "D").order == 3
