"""Small input checks shared by the stores: a bad value gets a ValueError saying what is wrong.

Every store (episodic, sessions, curated, procedural, semantic) and the context policy use
the same few checks, so the same bad value gets the same answer everywhere:

- :func:`check_user_id`: a user id is refused (not stripped) when it has leading or
  trailing whitespace or any control character, so ``"alice "`` can never read or delete
  ``"alice"``'s memories;
- :func:`check_flag`: a yes/no argument must be a real ``bool`` (``"no"`` is not False);
- :func:`check_count`: a count is an ``int`` from ``low`` to ``high`` (``bool`` refused);
- :func:`check_finite`: a number is a finite ``int``/``float`` (NaN and inf refused);
- :func:`check_text`: a non-empty string with no NUL and no lone surrogate, which names
  the field (and the batch ``index``) in every message.

:func:`redact_url` hides ``user:password@`` and key-like query values (``?api-key=``,
``&token=``) in a URL before it goes into a message.
"""

from __future__ import annotations

import ipaddress
import math
import numbers
import re
import unicodedata
from urllib.parse import urlsplit

MAX_USER_ID_CHARS = 128
MAX_ID_CHARS = MAX_USER_ID_CHARS
"""The longest user or session id a store accepts."""
DEFAULT_USER = "default"
"""The user a store sees when none is given."""


def _where(name: str, index: int | None) -> str:
    return name if index is None else f"item {index}: {name}"


def check_text(name: str, value: object, limit: int, *, index: int | None = None,
               strip: bool = True) -> str:
    """``value`` (stripped unless ``strip=False``), if it is a non-empty string of at most
    ``limit`` characters with no NUL character and no lone surrogate.

    ``index`` names the item of a batch in the message (``item 3: fact ...``).
    """
    where = _where(name, index)
    if not isinstance(value, str):
        raise ValueError(f"{where} must be a string, got {type(value).__name__}: {value!r:.80}")
    if len(value) > limit:  # before any scan of the text: a huge value costs nothing more
        raise ValueError(f"{where} is {len(value):,} characters; the limit is {limit:,}")
    if not value.strip():
        raise ValueError(f"{where} is empty; give it some text")
    if "\x00" in value:
        raise ValueError(f"{where} contains a NUL character (\\x00); SQLite's text functions "
                         "stop at it, so it could not be found again")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"{where} contains a lone surrogate {value[exc.start]!r} at position "
                         f"{exc.start}; it is not valid Unicode text and cannot be stored") from None
    return value.strip() if strip else value


def check_user_id(value: object, *, name: str = "user_id", limit: int = MAX_USER_ID_CHARS) -> str:
    """A user id in Unicode NFC: refused (never stripped) if it has leading or trailing
    whitespace or any control/format character, and normalised to NFC, so two ids that
    print alike are one id (``"jos\u00e9"`` and ``"jose\u0301"`` are the same user).

    Every store takes its user id through this function: this is the one place ids are
    normalised.
    """
    text = check_text(name, value, limit, strip=False)
    text = unicodedata.normalize("NFC", text)
    if len(text) > limit:  # NFC never lengthens Latin/Han text, but some scripts can grow
        raise ValueError(f"{name} is {len(text):,} characters in NFC; the limit is {limit:,}")
    if text != text.strip() or text.strip("\u00a0\u2007\u202f\ufeff") != text:
        raise ValueError(f"{name} {text!r} has leading or trailing whitespace; give the id "
                         "exactly, without spaces around it")
    bad = [ch for ch in text if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")]
    if bad:
        raise ValueError(f"{name} {text!r} contains a control character "
                         f"(U+{ord(bad[0]):04X}); ids must be plain printable text")
    return text


def check_flag(name: str, value: object) -> bool:
    """A real ``bool``: ``"no"``, ``"false"``, ``0`` and ``None`` are refused, not guessed at."""
    if value is True or value is False:
        return value
    raise ValueError(f"{name} must be True or False, got {type(value).__name__}: {value!r:.80}")


def is_int(value: object, low: int | None = None, high: int | None = None) -> bool:
    """True for a real ``int`` (``bool`` is not one) from ``low`` to ``high``.

    >>> is_int(3, low=1), is_int(True), is_int(0, low=1), is_int(2.0)
    (True, False, False, False)
    """
    return (isinstance(value, int) and not isinstance(value, bool)
            and (low is None or value >= low) and (high is None or value <= high))


def is_number(value: object) -> bool:
    """True for an ``int`` or ``float`` that is not a ``bool``."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_count(name: str, value: object, low: int = 1, high: int | None = None) -> int:
    """An ``int`` from ``low`` to ``high`` (``bool`` refused, whatever its value)."""
    if high is not None:
        kind = f"an int from {low:,} to {high:,}"
    else:
        kind = "a positive int" if low == 1 else f"an int of at least {low:,}"
    if (isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low
            or (high is not None and value > high)):
        raise ValueError(f"{name} must be {kind}, got {type(value).__name__}: {value!r:.80}")
    return int(value)


def check_finite(name: str, value: object, low: float | None = None,
                 high: float | None = None) -> float:
    """A finite number (NaN and ±inf refused; ``bool`` refused) within ``[low, high]``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number, got {type(value).__name__}: {value!r:.80}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if (low is not None and number < low) or (high is not None and number > high):
        raise ValueError(f"{name} must be from {low} to {high}, got {value!r}")
    return number


# user:password@ -- the password may hold a raw "/" (``http://u:pa/ss@host``), so the
# userinfo runs to the last "@" before any "?", "#" or whitespace, not to the first "/".
_USERINFO = re.compile(r"(?<=://)[^\s?#]*@")
# the value of a query parameter whose name looks like a secret: api-key, api_key, apikey,
# key, token, access_token, secret, password, passwd, pwd, auth, signature, sig, credential
_SECRET_PARAM = re.compile(
    r"(?i)([?&;][^=&#\s]*?(?:key|token|secret|passw(?:or)?d|pwd|auth|sig(?:nature)?|"
    r"credential)[^=&#\s]*=)[^&#\s]*")


def redact_url(url: object) -> str:
    """``url`` with any ``user:password@`` replaced by ``***@`` and the value of every
    key-like query parameter by ``***``; also works inside a longer message (every
    ``scheme://user:pw@`` in it is redacted).

    >>> redact_url("http://me:pa/ss@host:8000/v1?api-key=sk-1&model=m")
    'http://***@host:8000/v1?api-key=***&model=m'
    """
    text = _USERINFO.sub("***@", str(url))
    return _SECRET_PARAM.sub(lambda m: m.group(1) + "***", text)


def is_loopback(url: str) -> bool:
    """True for http://127.0.0.1..., http://localhost..., http://[::1]...: proxies are skipped there."""
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
