"""Checks that report.html's charts are drawn, from a headless Chromium screenshot (Python standard library only).

  check_charts.py page REPORT.html OUT.html [--blank]
      Writes OUT.html: the report with a style that hides all but its charts and places chart i at
      left 0, top TOP + i * PITCH (so each is found in the screenshot); prints how many charts there are.
      --blank also strips the charts' drawing (series, dots, marks), for the check to be shown failing.
  check_charts.py check SCREENSHOT.png COUNT
      Exits 1, naming the chart, when a chart's region is uniform or its plot holds ink in under
      MIN_COLUMNS of its columns (a frame and a legend alone do not pass; any drawn series does).
"""
import re
import struct
import sys
import zlib

TOP, PITCH = 10, 240
WIDTH, HEIGHT = 900, 220
# The plot inside its frame (SVGChart: x 60 to 890, y 10 to 196), less the frame's own pixels.
PLOT_X, PLOT_Y = (62, 888), (12, 194)
INK = 200  # a pixel with a channel below this is drawn (grid lines are #eee, the frame #ccc)
MIN_COLUMNS = 0.6


def page(report_path, out_path, blank):
    html = open(report_path, encoding="utf-8").read()
    count = 0

    def place(match):
        nonlocal count
        top = TOP + count * PITCH
        count += 1
        return f'<svg style="position:absolute;left:0;top:{top}px" '

    html = re.sub(r"<svg ", place, html)
    if blank:
        html = re.sub(r'<g class="marker">.*?</g>\n', "", html, flags=re.S)
        html = re.sub(r"<(polyline|circle)[^>]*/>\n", "", html)
    style = "<style>body{margin:0}body *{visibility:hidden}svg,svg *{visibility:visible}</style>"
    html = html.replace("</head>", style + "</head>", 1)
    open(out_path, "w", encoding="utf-8").write(html)
    print(count)


def decode_png(path):
    """Width, height and rows of RGB(A) bytes of an 8-bit, non-interlaced PNG."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"{path}: not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    if depth != 8 or color not in (2, 6) or interlace:
        sys.exit(f"{path}: unsupported PNG (depth {depth}, color type {color}, interlace {interlace})")
    bpp = 4 if color == 6 else 3
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        row = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        unfilter(kind, row, previous, bpp)
        rows.append(row)
        previous = row
    return width, height, bpp, rows


def unfilter(kind, row, up, bpp):
    if kind == 1:
        for i in range(bpp, len(row)):
            row[i] = (row[i] + row[i - bpp]) & 0xFF
    elif kind == 2:
        for i in range(len(row)):
            row[i] = (row[i] + up[i]) & 0xFF
    elif kind == 3:
        for i in range(len(row)):
            left = row[i - bpp] if i >= bpp else 0
            row[i] = (row[i] + ((left + up[i]) >> 1)) & 0xFF
    elif kind == 4:
        for i in range(len(row)):
            a = row[i - bpp] if i >= bpp else 0
            b, c = up[i], up[i - bpp] if i >= bpp else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            row[i] = (row[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF


def check(png_path, count):
    width, height, bpp, rows = decode_png(png_path)
    failures = []
    for index in range(count):
        top = TOP + index * PITCH
        if top + HEIGHT > height or WIDTH > width:
            failures.append(f"chart {index + 1}: outside the {width}x{height} screenshot")
            continue
        region = {bytes(rows[y][: WIDTH * bpp]) for y in range(top, top + HEIGHT)}
        if len(region) == 1 and len(set(next(iter(region)))) <= bpp:
            failures.append(f"chart {index + 1}: uniform, nothing drawn")
            continue
        inked = 0
        for x in range(*PLOT_X):
            column = (rows[y][x * bpp : x * bpp + 3] for y in range(top + PLOT_Y[0], top + PLOT_Y[1]))
            inked += any(min(pixel) < INK for pixel in column)
        share = inked / (PLOT_X[1] - PLOT_X[0])
        if share < MIN_COLUMNS:
            failures.append(f"chart {index + 1}: blank, ink in {share:.0%} of its plot's columns")
    for failure in failures:
        print(failure)
    if failures:
        sys.exit(1)
    print(f"{count} charts drawn")


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "page":
        page(sys.argv[2], sys.argv[3], "--blank" in sys.argv[4:])
    elif len(sys.argv) == 4 and sys.argv[1] == "check":
        check(sys.argv[2], int(sys.argv[3]))
    else:
        sys.exit(__doc__)
