"""`scripts/bench tags [N ...]`: what taxonomies cost (issue 21).

The generated corpus at each N (default 10000 100000), twice: as is, and with 3 tags per item
from a set of 1,000 (deterministic, `Topic K`), in both fencepost and Hugo. fencepost builds a
site whose one collection is the default collection written out plus `taxonomies = ["tags"]`
(`[taxonomies.tags]`: term pages of 10 entries, a terms index, no per-term feeds); Hugo builds
the same pages with its `tags` taxonomy (term pages paginated by 10, a terms page, no RSS),
with the corpus's own layouts plus a term and a taxonomy layout. Measured, median of 3, in
the same run: (a) cold build (fencepost: `build` over a ledger that holds every item; Hugo:
`hugo`), (b) one new item (tagged in the tagged corpus) then `publish` + `build`, against one
new file then `hugo`. Ratios: tagged / untagged for each tool, and fencepost against Hugo.
"""
import json, os, shutil, subprocess, time

TAXONOMY_CONFIG = """
[collections.answers]
dir = "answers"
url = "/answers/{id}/"
template = "answer.html"
list_url = "/answers/"
list_template = "list.html"
title = "All answers"
page_title = "Answers, page {number}"
id = "integer"
due = "end_of_day"
taxonomies = ["tags"]

[collections.answers.fields]
price = { type = "decimal", required = true, scale = 2, prefix = "$", min = 0 }

[taxonomies.tags]
url = "/tags/{term}/"
index_url = "/tags/"
template = "term.html"
index_template = "terms.html"
feed = false
page_size = 10
"""

HUGO_TERM = """<!doctype html><html><head><title>{{ .Title }} · {{ site.Title }}</title></head><body>
<h1>{{ .Title }}</h1>
<ul>{{ range .Paginator.Pages }}<li><a href="{{ .RelPermalink }}">{{ .Title }}</a> {{ .Date.Format "2 January 2006" }}</li>{{ end }}</ul>
{{ with .Paginator }}{{ if .HasPrev }}<a href="{{ .Prev.URL }}">Newer</a>{{ end }}{{ if .HasNext }}<a href="{{ .Next.URL }}">Older</a>{{ end }}{{ end }}
</body></html>
"""

HUGO_TAXONOMY = """<!doctype html><html><head><title>{{ .Title }} · {{ site.Title }}</title></head><body>
<h1>{{ .Title }}</h1>
<ul>{{ range .Data.Terms.Alphabetical }}<li><a href="{{ .Page.RelPermalink }}">{{ .Page.Title }}</a> ({{ .Count }})</li>{{ end }}</ul>
</body></html>
"""


def tags_of(i):
    out = []
    for k in ((i * 7) % 1000, (i * 13 + 101) % 1000, (i * 29 + 503) % 1000):
        t = f"Topic {k}"
        if t not in out:
            out.append(t)
    return out


def tag_fencepost_tree(d):
    for name in os.listdir(d):
        p = os.path.join(d, name)
        with open(p) as f:
            text = f.read()
        i = int(name[:-3])
        tags = ", ".join(json.dumps(t) for t in tags_of(i))
        with open(p, "w") as f:
            f.write(text.replace("+++\n", f"+++\ntags = [{tags}]\n", 1))


def tag_hugo_tree(d):
    for name in os.listdir(d):
        if not name.startswith("a"):
            continue
        p = os.path.join(d, name)
        with open(p) as f:
            text = f.read()
        i = int(name[1:-3]) + 1
        tags = ", ".join(json.dumps(t) for t in tags_of(i))
        with open(p, "w") as f:
            f.write(text.replace("---\n", f"---\ntags: [{tags}]\n", 1))


def fp_site(b, site, c, tagged):
    b.new_site(site, c)
    with open(os.path.join(site, "fencepost.toml"), "a") as f:
        f.write(TAXONOMY_CONFIG)
    for t in ("term.html", "terms.html"):
        shutil.copyfile(os.path.join(b.HERE, "starters", "common", "templates", t), os.path.join(site, "templates", t))
    if tagged:
        tag_fencepost_tree(os.path.join(site, "content", "answers"))
    subprocess.run([b.FP, "--site", site, "publish", "--now", b.NOW], check=True, stdout=subprocess.DEVNULL)


def hugo_site(b, hsite, c, tagged):
    shutil.rmtree(hsite, ignore_errors=True)
    shutil.copytree(os.path.join(c, "hugo"), hsite)
    cfg_path = os.path.join(hsite, "hugo.toml")
    with open(cfg_path) as f:
        cfg = f.read()
    cfg = cfg.replace('disableKinds = ["taxonomy", "term", "rss", "sitemap", "robotstxt", "404"]',
                      'disableKinds = ["rss", "sitemap", "robotstxt", "404"]')
    cfg += '\n[taxonomies]\ntag = "tags"\n\n[pagination]\npagerSize = 10\n'
    with open(cfg_path, "w") as f:
        f.write(cfg)
    with open(os.path.join(hsite, "layouts", "term.html"), "w") as f:
        f.write(HUGO_TERM)
    with open(os.path.join(hsite, "layouts", "taxonomy.html"), "w") as f:
        f.write(HUGO_TAXONOMY)
    if tagged:
        tag_hugo_tree(os.path.join(hsite, "content", "answers"))


def measure(b, hugo, n, c, tagged, runs=3):
    base = b.TMPFS
    label = "tagged" if tagged else "plain"
    site = os.path.join(base, f"tags-fp-{label}-{n}")
    fp_site(b, site, c, tagged)
    cold = []
    for _ in range(runs):
        shutil.rmtree(os.path.join(site, "public"), ignore_errors=True)
        dt, rss, out = b.run([b.FP, "--site", site, "build", "--json"])
        cold.append((dt, rss, json.loads(out)["files"]))
    inc = []
    for k in range(runs):
        new_id = 10_000_000 + k
        time.sleep(2.1)  # let the stat cache trust the unchanged tree
        text = b.NEW_ITEM_FP.format(id=new_id)
        if tagged:
            tags = ", ".join(json.dumps(t) for t in tags_of(new_id))
            text = text.replace("+++\n", f"+++\ntags = [{tags}]\n", 1)
        with open(os.path.join(site, "content", "answers", f"{new_id}.md"), "w") as f:
            f.write(text)
        d1, r1, _ = b.timed_publish(site)
        d2, r2, out = b.run([b.FP, "--site", site, "build", "--json"])
        o = json.loads(out)
        inc.append((d1 + d2, max(r1, r2), o["rendered"]))
        subprocess.run([b.FP, "--site", site, "gc", "--keep", "1", "--grace-secs", "0"], check=True, stdout=subprocess.DEVNULL)
    hsite = os.path.join(base, f"tags-hugo-{label}-{n}")
    hugo_site(b, hsite, c, tagged)
    hcold = []
    for _ in range(runs):
        shutil.rmtree(os.path.join(hsite, "OUT"), ignore_errors=True)
        shutil.rmtree(os.path.join(hsite, "resources"), ignore_errors=True)
        dt, rss, _ = b.run([hugo, "--quiet", "-d", "OUT"], cwd=hsite)
        hcold.append((dt, rss))
    hinc = []
    for k in range(runs):
        new_id = 10_000_000 + k
        text = b.NEW_ITEM_HUGO.format(id=new_id)
        if tagged:
            tags = ", ".join(json.dumps(t) for t in tags_of(new_id))
            text = text.replace("---\n", f"---\ntags: [{tags}]\n", 1)
        with open(os.path.join(hsite, "content", "answers", f"new{new_id}.md"), "w") as f:
            f.write(text)
        dt, rss, _ = b.run([hugo, "--quiet", "-d", "OUT"], cwd=hsite)
        hinc.append((dt, rss))
    hugo_files = sum(len(fs) for _, _, fs in os.walk(os.path.join(hsite, "OUT")))
    med = lambda xs: sorted(xs)[len(xs) // 2]
    row = {
        "n": n, "tagged": tagged,
        "fp_cold_s": med([x[0] for x in cold]), "fp_cold_rss": max(x[1] for x in cold), "fp_files": cold[-1][2],
        "fp_inc_s": med([x[0] for x in inc]), "fp_inc_rendered": med([x[2] for x in inc]),
        "hugo_cold_s": med([x[0] for x in hcold]), "hugo_cold_rss": max(x[1] for x in hcold), "hugo_files": hugo_files,
        "hugo_inc_s": med([x[0] for x in hinc]),
    }
    shutil.rmtree(site, ignore_errors=True)
    shutil.rmtree(hsite, ignore_errors=True)
    b.log(json.dumps(row))
    return row


def bench_tags(b, sizes):
    b.build_fencepost()
    hugo, hugo_version = b.hugo_binary()
    rows = []
    for n in sizes:
        c = b.corpus(b.TMPFS, n)
        plain = measure(b, hugo, n, c, False)
        tagged = measure(b, hugo, n, c, True)
        rows.append((plain, tagged))
    print(f"\nfencepost against Hugo {hugo_version}: 3 tags per item from 1,000, term pages of 10; median of 3, seconds")
    print("| N | corpus | fencepost cold (files) | Hugo cold (files) | Hugo/fp | fencepost one new item (rendered) | Hugo one new file | Hugo/fp |")
    print("|---|---|---|---|---|---|---|---|")
    for plain, tagged in rows:
        for r in (plain, tagged):
            print(f"| {r['n']:,} | {'tagged' if r['tagged'] else 'untagged'} | {r['fp_cold_s']:.2f} ({r['fp_files']:,}) | "
                  f"{r['hugo_cold_s']:.2f} ({r['hugo_files']:,}) | {r['hugo_cold_s'] / r['fp_cold_s']:.1f}x | "
                  f"{r['fp_inc_s']:.2f} ({r['fp_inc_rendered']}) | {r['hugo_inc_s']:.2f} | {r['hugo_inc_s'] / r['fp_inc_s']:.1f}x |")
        print(f"| {plain['n']:,} | tagged / untagged | {tagged['fp_cold_s'] / plain['fp_cold_s']:.2f}x | "
              f"{tagged['hugo_cold_s'] / plain['hugo_cold_s']:.2f}x | | {tagged['fp_inc_s'] / plain['fp_inc_s']:.2f}x | "
              f"{tagged['hugo_inc_s'] / plain['hugo_inc_s']:.2f}x | |")


def bench_ab(b, old_bin, sizes, runs=3):
    """`scripts/bench ab OLD_BIN [N ...]`: this build against another fencepost binary (the
    release before) on the untagged corpus, interleaved round by round so drift on a noisy
    machine hits both alike: cold `build`, and one new item then `publish` + `build`."""
    b.build_fencepost()
    rows = []
    for n in sizes:
        c = b.corpus(b.TMPFS, n)
        sites = {}
        for label, exe in (("old", old_bin), ("new", b.FP)):
            site = os.path.join(b.TMPFS, f"ab-{label}-{n}")
            shutil.rmtree(site, ignore_errors=True)
            subprocess.run([exe, "init", site, "--now", b.NOW], check=True, stdout=subprocess.DEVNULL)
            os.remove(os.path.join(site, "content", "answers", "1.md"))
            src = os.path.join(c, "fencepost", "content", "answers")
            for name in os.listdir(src):
                shutil.copyfile(os.path.join(src, name), os.path.join(site, "content", "answers", name))
            subprocess.run([exe, "--site", site, "publish", "--now", b.NOW], check=True, stdout=subprocess.DEVNULL)
            sites[label] = (site, exe)
        cold = {"old": [], "new": []}
        inc = {"old": [], "new": []}
        for _ in range(runs):
            for label, (site, exe) in sites.items():
                shutil.rmtree(os.path.join(site, "public"), ignore_errors=True)
                dt, rss, _ = b.run([exe, "--site", site, "build", "--json"])
                cold[label].append((dt, rss))
        for k in range(runs):
            time.sleep(2.1)  # let the stat cache trust the unchanged tree
            for label, (site, exe) in sites.items():
                new_id = 10_000_000 + k
                with open(os.path.join(site, "content", "answers", f"{new_id}.md"), "w") as f:
                    f.write(b.NEW_ITEM_FP.format(id=new_id))
            for label, (site, exe) in sites.items():
                d1, r1, _ = b.run([exe, "--site", site, "publish", "--now", b.LATER])
                d2, r2, _ = b.run([exe, "--site", site, "build", "--json"])
                inc[label].append((d1 + d2, max(r1, r2)))
                subprocess.run([exe, "--site", site, "gc", "--keep", "1", "--grace-secs", "0"], check=True, stdout=subprocess.DEVNULL)
        med = lambda xs: sorted(xs)[len(xs) // 2]
        row = {"n": n}
        for label in ("old", "new"):
            row[f"{label}_cold"] = med([x[0] for x in cold[label]])
            row[f"{label}_cold_rss"] = max(x[1] for x in cold[label])
            row[f"{label}_inc"] = med([x[0] for x in inc[label]])
            row[f"{label}_inc_rss"] = max(x[1] for x in inc[label])
        b.log(json.dumps(row))
        rows.append(row)
        for label in ("old", "new"):
            shutil.rmtree(sites[label][0], ignore_errors=True)
    print("\nthis build against the one before, untagged corpus, median of 3 (interleaved), seconds")
    print("| N | cold: before | cold: now | now/before | one new item, publish + build: before | now | now/before | peak RSS cold before / now (MiB) |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['n']:,} | {r['old_cold']:.2f} | {r['new_cold']:.2f} | {r['new_cold'] / r['old_cold']:.2f}x | "
              f"{r['old_inc']:.2f} | {r['new_inc']:.2f} | {r['new_inc'] / r['old_inc']:.2f}x | "
              f"{r['old_cold_rss']:.0f} / {r['new_cold_rss']:.0f} |")
