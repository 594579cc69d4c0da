"""URL converters: `<id:name>` is a database id, the values `apps.core.params.Id` accepts.

Zero and digit strings too long for an id do not match (a 404, or the next pattern), so a path id
is never an overflow and always a valid `Id` wherever the view passes it on.
"""

# Ids are positive 64-bit integers; 18 significant digits always fit.
MAX_ID_DIGITS = 18


class IdConverter:
    regex = f"0*[1-9][0-9]{{0,{MAX_ID_DIGITS - 1}}}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(value)
