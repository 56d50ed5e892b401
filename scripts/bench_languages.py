"""`scripts/bench languages [N ...]`: what languages cost (issue 83, docs/languages.md).

The generated corpus at each N (default 10000), twice: in one language, and in three — each
item with a French translation beside it (`K.fr.md`) and a German one in Hugo's per-language
folder (`content/de/answers/K.md`), both with titles and bodies of their own, so the site has
3N items. Measured, median of 3, rounds interleaved: (a) cold `build` over a ledger that holds
every item; (b) one new item (an original only), `publish` + `build`; (c) in the
three-language site, one new translation of an item that had none. Must hold: (a) three / one
at most 3.3x; (c) O(changed): files rendered and time beside (b).
"""
import json, os, shutil, subprocess, time

LANGUAGES = """
[languages.en]
name = "English"

[languages.fr]
name = "Français"
title = "Réponses"

[languages.de]
name = "Deutsch"
dir = "de"
"""

# Items left without a French translation, to add one per round of (c).
UNTRANSLATED = 10


def translate(text, lang):
    """An item's file in `lang`: its title and body marked as the language's own."""
    head, _, body = text.partition("+++\n\n")
    head = head.replace('title = "', f'title = "[{lang}] ', 1)
    return f"{head}+++\n\n[{lang}] {body}"


def day_of(path):
    with open(path) as f:
        for line in f:
            if line.startswith("day = "):
                return line.strip()
    return ""


def make_site(b, site, c, three):
    b.new_site(site, c)
    if three:
        with open(os.path.join(site, "fencepost.toml"), "a") as f:
            f.write(LANGUAGES)
        src = os.path.join(site, "content", "answers")
        de = os.path.join(site, "content", "de", "answers")
        os.makedirs(de, exist_ok=True)
        # By date (then id): the newest items are left untranslated, so (c) adds the newest
        # French item, as (b) adds the newest original (an older one would shift the lists
        # numbered from the oldest, in any language).
        names = sorted(os.listdir(src), key=lambda n: (day_of(os.path.join(src, n)), int(n[:-3])))
        for i, name in enumerate(names):
            with open(os.path.join(src, name)) as f:
                text = f.read()
            if i < len(names) - UNTRANSLATED:
                with open(os.path.join(src, name[:-3] + ".fr.md"), "w") as f:
                    f.write(translate(text, "fr"))
            with open(os.path.join(de, name), "w") as f:
                f.write(translate(text, "de"))
    subprocess.run([b.FP, "--site", site, "publish", "--now", b.NOW], check=True, stdout=subprocess.DEVNULL)
    src = os.path.join(site, "content", "answers")
    return sorted(os.listdir(src), key=lambda n: (day_of(os.path.join(src, n)), n))


def cold(b, site):
    shutil.rmtree(os.path.join(site, "public"), ignore_errors=True)
    dt, rss, out = b.run([b.FP, "--site", site, "build", "--json"])
    return dt, rss, json.loads(out)["files"]


def after(b, site, write):
    """`write` one file, then publish + build: (seconds, files rendered)."""
    time.sleep(2.1)  # let the stat cache trust the unchanged tree
    write()
    d1, _, _ = b.timed_publish(site)
    d2, _, out = b.run([b.FP, "--site", site, "build", "--json"])
    subprocess.run([b.FP, "--site", site, "gc", "--keep", "1", "--grace-secs", "0"], check=True, stdout=subprocess.DEVNULL)
    return d1 + d2, json.loads(out)["rendered"]


def measure(b, n, runs=3):
    c = b.corpus(b.TMPFS, n)
    one = os.path.join(b.TMPFS, f"lang-one-{n}")
    three = os.path.join(b.TMPFS, f"lang-three-{n}")
    make_site(b, one, c, False)
    names = make_site(b, three, c, True)
    untranslated = [x for x in names if x.endswith(".md") and not x.endswith(".fr.md")
                    and x[:-3] + ".fr.md" not in names]
    rows = {"one_cold": [], "three_cold": [], "one_item": [], "three_item": [], "translation": []}
    for k in range(runs):
        for label, site in (("one", one), ("three", three)):
            dt, rss, files = cold(b, site)
            rows[f"{label}_cold"].append((dt, rss, files))
        new_id = 10_000_000 + k
        for label, site in (("one", one), ("three", three)):
            path = os.path.join(site, "content", "answers", f"{new_id}.md")
            write = lambda p=path: open(p, "w").write(b.NEW_ITEM_FP.format(id=new_id))
            rows[f"{label}_item"].append(after(b, site, write))
        src = os.path.join(three, "content", "answers", untranslated[k])
        with open(src) as f:
            text = translate(f.read(), "fr")
        dst = src[:-3] + ".fr.md"
        rows["translation"].append(after(b, three, lambda: open(dst, "w").write(text)))
    med = lambda xs: sorted(xs)[len(xs) // 2]
    r = {
        "n": n,
        "one_cold_s": med([x[0] for x in rows["one_cold"]]), "one_files": rows["one_cold"][-1][2],
        "one_cold_rss": max(x[1] for x in rows["one_cold"]),
        "three_cold_s": med([x[0] for x in rows["three_cold"]]), "three_files": rows["three_cold"][-1][2],
        "three_cold_rss": max(x[1] for x in rows["three_cold"]),
        "one_item_s": med([x[0] for x in rows["one_item"]]), "one_item_rendered": med([x[1] for x in rows["one_item"]]),
        "three_item_s": med([x[0] for x in rows["three_item"]]), "three_item_rendered": med([x[1] for x in rows["three_item"]]),
        "translation_s": med([x[0] for x in rows["translation"]]), "translation_rendered": med([x[1] for x in rows["translation"]]),
    }
    shutil.rmtree(one, ignore_errors=True)
    shutil.rmtree(three, ignore_errors=True)
    b.log(json.dumps(r))
    return r


def main(b, sizes):
    b.build_fencepost()
    rows = [measure(b, n) for n in sizes]
    print("\nOne language against three (each item with a French and a German translation: 3N items); median of 3, seconds")
    print("| N | one language cold (files) | three cold (files) | three / one | one new item: one language (rendered) | three (rendered) | one new translation (rendered) |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['n']:,} | {r['one_cold_s']:.2f} ({r['one_files']:,}, {r['one_cold_rss']:.0f} MiB) | "
              f"{r['three_cold_s']:.2f} ({r['three_files']:,}, {r['three_cold_rss']:.0f} MiB) | "
              f"**{r['three_cold_s'] / r['one_cold_s']:.2f}x** | {r['one_item_s']:.3f} ({r['one_item_rendered']}) | "
              f"{r['three_item_s']:.3f} ({r['three_item_rendered']}) | {r['translation_s']:.3f} ({r['translation_rendered']}) |")
