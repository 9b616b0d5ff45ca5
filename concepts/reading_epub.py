"""An e-book (.epub) as the Markdown the extractor reads, a page per chapter file.

Open textbooks are often handed out as EPUB: a zip of XHTML chapters. The chapters are
read in the book's reading order (the package's spine), each by the web-page reader
(`concepts.reading_html`) with the book's style sheets, so a term set bold by a class
the book's CSS defines counts. A chapter file is a page. A book with DRM (its
`META-INF/encryption.xml` encrypts chapters) cannot be read and says so.
"""

from __future__ import annotations

import posixpath

from concepts.reading import UnreadableFile
from concepts.reading_html import html_text
from concepts.reading_office import OfficeFileError, open_package, package_bytes, package_xml

CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"
OPF = "{http://www.idpf.org/2007/opf}"
_PAGES = ("application/xhtml+xml", "text/html")


def epub_pages(content: bytes) -> list[str]:
    """One Markdown page per chapter file, in reading order."""
    with open_package(content, "META-INF/container.xml", ".epub") as archive:
        if "META-INF/encryption.xml" in archive.namelist():
            encrypted = package_xml(archive, "META-INF/encryption.xml")
            # Fonts are often obfuscated (harmless); chapters encrypted mean DRM.
            if any(
                (ref.get("URI") or "").lower().endswith((".xhtml", ".html", ".htm"))
                for ref in encrypted.iter()
                if ref.tag.endswith("CipherReference")
            ):
                raise OfficeFileError("the EPUB is encrypted (DRM): upload a copy without it")
        rootfile = package_xml(archive, "META-INF/container.xml").find(
            f"{CONTAINER}rootfiles/{CONTAINER}rootfile"
        )
        if rootfile is None or not rootfile.get("full-path"):
            raise OfficeFileError("the EPUB names no package file (META-INF/container.xml)")
        opf_path = rootfile.get("full-path") or ""
        package = package_xml(archive, opf_path)
        folder = posixpath.dirname(opf_path)
        items = {}
        for item in package.iter(f"{OPF}item"):
            href = posixpath.normpath(posixpath.join(folder, item.get("href") or ""))
            items[item.get("id") or ""] = (href, item.get("media-type") or "")
        css = "".join(
            package_bytes(archive, href).decode("utf-8", "replace")
            for href, kind in items.values()
            if kind == "text/css" and href in archive.namelist()
        )
        pages = []
        for ref in package.iter(f"{OPF}itemref"):
            href, kind = items.get(ref.get("idref") or "", ("", ""))
            if kind in _PAGES and href in archive.namelist():
                try:
                    pages.append(html_text(package_bytes(archive, href), css))
                except UnreadableFile as exc:
                    raise OfficeFileError(f"{href}: {exc}") from exc
    return pages or [""]
