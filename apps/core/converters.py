"""URL converters: `<id:name>` is a database id; longer digit strings are a 404, never an overflow."""

# Ids are 64-bit integers; 18 digits always fit.
MAX_ID_DIGITS = 18


class IdConverter:
    regex = f"[0-9]{{1,{MAX_ID_DIGITS}}}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(value)
