#!/usr/bin/env python3
"""Scripts/hot-code's reading and writing of linker files.

  linker-script.py sections MAP          the code sections of an lld map (-Map), one per line:
                                         "OFFSET SIZE FILE:(SECTION)", offsets in hexadecimal
  linker-script.py script SECTIONS RUN...
                                         a linker script that places the sections the runs entered (each RUN a
                                         list of offsets, first entered first) ahead of the rest of .text
  linker-script.py compare KEPT FRESH    how many of FRESH's sections KEPT names; exits 1 under half

The script names each section by its object file, its archive member or the module folder SwiftPM builds it
in (*/Courier.build/Session.swift.o), never by a path, so it holds in any checkout and scratch folder; and by
the section's own name, which with one section per function is the function's (.text.$s7Courier...), or a
compiler's local name for the code it emits without a symbol (.text..L__unnamed_3, .text..Lobjectdestroy.12):
a symbol ordering file cannot name those, and a request runs hundreds of them.
"""
import re
import sys

SECTION = re.compile(r'^\s*([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+\d+\s+(\S.*)$')
CODE = re.compile(r'^(.*):\((\.text[^)]*)\)$')  # an input section of code: FILE:(.text...)
OUTPUT = re.compile(r'^\s{0,12}[0-9a-f]+\s+[0-9a-f]+\s+[0-9a-f]+\s+\d+\s(\S.*)$')


def sections(map_path):
    inside = False
    for line in open(map_path):
        output = OUTPUT.match(line)
        if output:  # an output section's line, in the map's first column of names: .text, or the gathered code
            inside = output.group(1) in ('.text', '.text.courier_hot')
            continue
        match = SECTION.match(line)
        if inside and match and int(match.group(2), 16) > 0 and CODE.match(match.group(3)):
            print(match.group(1), match.group(2), match.group(3))


def pattern(spec):
    path, section = CODE.match(spec).groups()
    member = re.match(r'^(.*)\((.*)\)$', path)
    if member:  # an archive's member: */libswiftCore.a:Swift.o
        return '*/%s:%s("%s")' % (member.group(1).split('/')[-1], member.group(2), section)
    parts = path.split('/')
    name = '/'.join(parts[-2:]) if len(parts) > 1 and parts[-2].endswith('.build') else parts[-1]
    return '*/%s("%s")' % (name, section)


def script(sections_path, runs):
    specs = {}
    for line in open(sections_path):
        offset, _, spec = line.rstrip('\n').split(' ', 2)
        specs[int(offset, 16)] = spec
    lines, seen = [], set()
    for run in runs:
        for line in open(run):
            offset = int(line, 16)
            if offset in specs and offset not in seen:
                seen.add(offset)
                lines.append('    ' + pattern(specs[offset]))
    print('/* Made by Scripts/hot-code: the code `courier` runs to start, send a GET and write what it gets,')
    print('   first run first, placed ahead of the rest (Scripts/install links with it). */')
    print('SECTIONS {\n  .text.courier_hot : {')
    print('\n'.join(lines))
    print('  }\n}\nINSERT BEFORE .text;')


def compare(kept_path, fresh_path):
    def named(path):
        return {line.strip() for line in open(path) if '("' in line}
    kept, fresh = named(kept_path), named(fresh_path)
    share = len(kept & fresh) / max(len(fresh), 1)
    print('%s names %d of the %d sections a fresh list names (%.0f %%)' % (kept_path, len(kept & fresh), len(fresh),
                                                                         100 * share))
    if share < 0.5:
        sys.exit('%s is stale: run Scripts/hot-code' % kept_path)


if __name__ == '__main__':
    if len(sys.argv) == 3 and sys.argv[1] == 'sections':
        sections(sys.argv[2])
    elif len(sys.argv) >= 4 and sys.argv[1] == 'script':
        script(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) == 4 and sys.argv[1] == 'compare':
        compare(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
