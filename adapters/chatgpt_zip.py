"""The bytes of a ChatGPT export's conversations.json: the file itself, or the member of the
export's zip (one member, bounded in size, refused when it would inflate like a zip bomb)."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from mindledger.adapters.import_rules import MAX_IMPORT_BYTES, import_bytes
from mindledger.domain.errors import InvalidInputError

MEMBER = "conversations.json"
# A member that inflates more than this many times over is refused as a zip bomb (real
# conversations.json files compress about 5-10 times).
MAX_RATIO = 200


def export_json(path: Path) -> bytes:
    """The bytes of conversations.json: the file itself, or the member of an export's zip."""
    data = import_bytes(path)
    if not data.startswith(b"PK"):
        return data
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return _member(archive, path)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError) as e:
        raise InvalidInputError(f"{path} is not a readable zip ({_short(e)})") from None
    except (OSError, ValueError, RuntimeError) as e:
        raise InvalidInputError(
            f"{path}: cannot read {MEMBER} from the zip ({_short(e)})"
        ) from None


def _member(archive: zipfile.ZipFile, path: Path) -> bytes:
    found = [i for i in archive.infolist() if i.filename.rsplit("/", 1)[-1] == MEMBER]
    if not found:
        raise InvalidInputError(f"{path} holds no {MEMBER}; give a ChatGPT data export")
    info = min(found, key=lambda i: i.filename.count("/"))
    if info.file_size > MAX_IMPORT_BYTES or info.file_size > MAX_RATIO * max(
        info.compress_size, 1024
    ):
        raise InvalidInputError(
            f"{path}: {info.filename} would inflate to {info.file_size:,} bytes from "
            f"{info.compress_size:,}; refused (a zip bomb or not an export)"
        )
    with archive.open(info) as member:
        # The stated size can lie: never read more than it says (plus one byte to notice).
        data = member.read(info.file_size + 1)
    if len(data) > info.file_size:
        raise InvalidInputError(f"{path}: {info.filename} is larger than the zip says; refused")
    return data


def _short(e: BaseException) -> str:
    return str(e).splitlines()[0][:120] if str(e) else type(e).__name__
