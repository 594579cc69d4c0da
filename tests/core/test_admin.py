"""What every admin page shares (apps/core/admin.py)."""

import pytest
from django.contrib import admin
from django.contrib.admin import helpers
from django.test import RequestFactory

from apps.core.admin import ModelAdmin
from apps.realms.models import Realm

PAGES = sorted(admin.site._registry.items(), key=lambda item: item[0]._meta.label)


def test_every_page_of_parleys_models_is_a_parley_admin():
    ours = [(model, page) for model, page in PAGES if model._meta.app_config.name.startswith("apps.")]
    assert len(ours) > 20
    assert [model._meta.label for model, page in ours if not isinstance(page, ModelAdmin)] == []


def actions_of(page, user) -> list[str]:
    request = RequestFactory().get("/")
    request.user = user
    return sorted(page.get_actions(request))


@pytest.mark.parametrize("value", ["x", "", "-99999999999999999999"])
def test_an_action_on_rows_that_are_not_ids_changes_nothing_and_says_so(staff, owner, realm, value):
    tried = 0
    for model, page in PAGES:
        url = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        for action in actions_of(page, owner):
            rows = [str(realm.id), value] if model is Realm else [value]
            data = {"action": action, "index": "0", helpers.ACTION_CHECKBOX_NAME: rows, "confirmed": "yes"}
            response = staff.post(url, data, follow=True)
            assert response.status_code == 200, (url, action)
            assert "The rows chosen are not rows of this list." in response.content.decode(), (url, action)
            tried += 1
    assert tried > 20
    realm.refresh_from_db()
    assert not realm.deactivated
