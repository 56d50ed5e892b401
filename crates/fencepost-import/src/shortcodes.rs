//! Hugo's shortcodes (`{{< name args >}}`, `{{% name args %}}`, paired with `{{< /name >}}`)
//! turned into Markdown, or reported: fencepost renders Markdown and has no shortcodes, and
//! no `{{<` may reach a page. Built-ins become what they show — `figure` an image with its
//! caption, `highlight` a fenced code block, `ref`/`relref` the page's new URL — and embeds
//! (`youtube`, `vimeo`, `gist`, `x`/`tweet`/`twitter`, `instagram`) become plain links, which
//! load nothing from a third party until a reader follows them. Any other shortcode is
//! removed (a paired one keeps its inner text as a block of its own — see [`super::shortcode_blocks`]
//! — but an `*.inline` one's body is template code and goes with it) and reported with its
//! line. An escaped one (`{{</* x */>}}`) is written as Hugo shows it: `{{< x >}}`.

/// A shortcode that was not turned into its content, for the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Unconverted {
    pub line: usize,
    pub name: String,
    pub why: String,
}

/// One shortcode as written: its name and arguments (positional, then `key="value"`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Call {
    name: String,
    positional: Vec<String>,
    named: Vec<(String, String)>,
    closing: bool,
}

impl Call {
    fn arg(&self, key: &str, at: usize) -> Option<&str> {
        self.named
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .or_else(|| self.positional.get(at).map(String::as_str))
    }
}

/// Splits a shortcode's inside (`figure src="a.png" alt="A"`) into its name and arguments.
fn parse_call(inside: &str) -> Call {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    for c in inside.trim().chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '"' | '`') => quote = Some(c),
            (None, c) if c.is_whitespace() => {
                if !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
            }
            (None, c) => cur.push(c),
        }
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    let mut call = Call::default();
    let mut it = words.into_iter();
    let mut first = it.next().unwrap_or_default();
    // `{{</ name >}}`: the slash stands apart from the name.
    if first == "/" {
        first = format!("/{}", it.next().unwrap_or_default());
    }
    call.closing = first.starts_with('/');
    call.name = first.trim_start_matches('/').to_string();
    for w in it {
        match w.split_once('=') {
            Some((k, v)) if !k.is_empty() && !k.contains('/') => {
                call.named.push((k.to_string(), v.to_string()))
            }
            _ => call.positional.push(w),
        }
    }
    call
}

/// Converts every shortcode of `body`; `url_of` gives the new URL of a page `ref` names.
pub(super) fn convert(
    body: &str,
    url_of: &dyn Fn(&str) -> Option<String>,
) -> (String, Vec<Unconverted>) {
    let mut out = String::with_capacity(body.len());
    let mut report = Vec::new();
    let mut rest = body;
    let line_of = |rest: &str| body[..body.len() - rest.len()].matches('\n').count() + 1;
    while let Some(at) = rest.find("{{") {
        let after = &rest[at + 2..];
        let (open, close) = match after.chars().next() {
            Some('<') => ("<", ">}}"),
            Some('%') => ("%", "%}}"),
            _ => {
                out.push_str(&rest[..at + 2]);
                rest = after;
                continue;
            }
        };
        let Some(end) = after.find(close) else {
            out.push_str(&rest[..at + 2]);
            rest = after;
            continue;
        };
        out.push_str(&rest[..at]);
        let line = line_of(rest) + rest[..at].matches('\n').count();
        let inside = &after[open.len()..end];
        rest = &after[end + close.len()..];
        // `{{</* x */>}}` is Hugo's way to write a shortcode as text.
        if let Some(text) = escaped(open, inside, close) {
            out.push_str(&text);
            continue;
        }
        let call = parse_call(inside);
        if call.closing {
            continue; // The end of a pair whose start was handled (or reported).
        }
        let inner = paired_inner(&call.name, rest);
        let (text, consumed) = match inner {
            Some((inner, len)) => (Some(inner), len),
            None => (None, 0),
        };
        match render(&call, text, url_of) {
            Ok(md) => out.push_str(&md),
            Err(why) => {
                let (kept, u) = unrendered(&call, text, line, why, url_of);
                out.push_str(&kept);
                report.extend(u);
            }
        }
        rest = &rest[consumed..];
    }
    out.push_str(rest);
    (out, report)
}

/// A shortcode fencepost cannot render: what stays of it, and the report's lines (its own
/// and its body's). An inline shortcode's body is template code (Go templates, a `<style>`
/// block): removed with it. Another's inner text is the page's own, kept as a block of its
/// own (a diagram a code block, a notice an alert), never run into the prose around it; the
/// shortcodes inside it (a `tab` in `tabs`) are converted too.
fn unrendered(
    call: &Call,
    text: Option<&str>,
    line: usize,
    why: String,
    url_of: &dyn Fn(&str) -> Option<String>,
) -> (String, Vec<Unconverted>) {
    let inline = call.name.ends_with(".inline");
    let mut report = Vec::new();
    let mut out = String::new();
    let mut kept = None;
    if let Some(t) = text.filter(|_| !inline) {
        let (t, inner) = convert(t, url_of);
        report.extend(inner.into_iter().map(|u| Unconverted {
            line: line + u.line - 1,
            ..u
        }));
        let (block, what) =
            super::shortcode_blocks::block(&call.name, &call.positional, &call.named, &t);
        out = block;
        kept = Some(what);
    }
    let why = match (inline, kept) {
        (true, _) => {
            format!("{why}: an inline shortcode's body is template code, so it was removed with it")
        }
        (false, Some(what)) => format!("{why}: its body was kept as {what}"),
        (false, None) => why,
    };
    report.insert(
        0,
        Unconverted {
            line,
            name: call.name.clone(),
            why,
        },
    );
    (out, report)
}

/// An escaped shortcode (`inside` is `/* x */`) as Hugo shows it: as written, less the
/// comment marks, spacing kept — in a code sample or not.
fn escaped(open: &str, inside: &str, close: &str) -> Option<String> {
    let inner = inside
        .trim()
        .strip_prefix("/*")
        .and_then(|s| s.strip_suffix("*/"))?;
    let lead = &inside[..inside.len() - inside.trim_start().len()];
    let trail = &inside[inside.trim_end().len()..];
    Some(format!("{{{{{open}{lead}{inner}{trail}{close}"))
}

/// For a paired shortcode, the text up to its closing tag and how far past the tag to go.
/// The closing tag is read as Hugo reads it, whatever its spacing (`{{< /x >}}`,
/// `{{</x>}}`, `{{</ x >}}`, `{{% /x %}}`); another opening of the same shortcode first means
/// this one is not paired here.
fn paired_inner<'a>(name: &str, rest: &'a str) -> Option<(&'a str, usize)> {
    let mut from = 0;
    while let Some(at) = rest[from..].find("{{") {
        let start = from + at;
        let after = &rest[start + 2..];
        let close = match after.chars().next() {
            Some('<') => ">}}",
            Some('%') => "%}}",
            _ => {
                from = start + 2;
                continue;
            }
        };
        let Some(end) = after.find(close) else {
            return None;
        };
        let call = parse_call(&after[1..end]);
        let past = start + 2 + end + close.len();
        if call.name == name {
            return match call.closing {
                true => Some((&rest[..start], past)),
                false => None,
            };
        }
        from = past;
    }
    None
}

fn render(
    call: &Call,
    inner: Option<&str>,
    url_of: &dyn Fn(&str) -> Option<String>,
) -> Result<String, String> {
    let need = |key: &str, at: usize| {
        call.arg(key, at)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| format!("has no {key}"))
    };
    Ok(match call.name.as_str() {
        "figure" => {
            let src = need("src", 0)?;
            let alt = call
                .arg("alt", usize::MAX)
                .or(call.arg("caption", usize::MAX));
            let title = call
                .arg("title", usize::MAX)
                .map(|t| format!(" \"{}\"", t.replace('"', "'")))
                .unwrap_or_default();
            let img = format!("![{}]({src}{title})", alt.unwrap_or(""));
            let img = match call.arg("link", usize::MAX) {
                Some(link) => format!("[{img}]({link})"),
                None => img,
            };
            match call.arg("caption", usize::MAX) {
                Some(c) => format!("{img}\n\n*{c}*"),
                None => img,
            }
        }
        "img" | "image" | "imgproc" | "picture" | "resize" | "responsive-image" => image(call)?,
        "highlight" => {
            let code = inner.ok_or("has no closing {{< /highlight >}}")?;
            let lang = call.positional.first().map(String::as_str).unwrap_or("");
            format!("```{lang}\n{}\n```", code.trim_matches('\n'))
        }
        "ref" | "relref" => {
            let target = need("path", 0)?;
            let (page, anchor) = target.split_once('#').unwrap_or((target, ""));
            let url = url_of(page)
                .ok_or_else(|| format!("names {target:?}, which is not a page of the site"))?;
            match anchor {
                "" => url,
                a => format!("{url}#{a}"),
            }
        }
        "youtube" => {
            let id = need("id", 0)?;
            format!("[▶ Watch on YouTube](https://www.youtube-nocookie.com/embed/{id})")
        }
        "vimeo" | "vimeo_simple" => {
            let id = need("id", 0)?;
            format!("[▶ Watch on Vimeo](https://vimeo.com/{id})")
        }
        "gist" => {
            let user = need("user", 0)?;
            let id = need("id", 1)?;
            format!("[Gist {user}/{id}](https://gist.github.com/{user}/{id})")
        }
        "x" | "tweet" | "twitter" | "twitter_simple" => {
            let user = need("user", 0)?;
            let id = need("id", 1)?;
            format!("[Post by @{user} on X](https://x.com/{user}/status/{id})")
        }
        "instagram" | "instagram_simple" => {
            let id = need("id", 0)?;
            format!("[Instagram post](https://www.instagram.com/p/{id}/)")
        }
        other => return Err(format!("`{other}` is not a shortcode fencepost can render")),
    })
}

/// A site's own image shortcode (Hugo's documentation calls its example `imgproc`): its
/// template resizes with Hugo's image functions, which do not come along; the image becomes a
/// Markdown image, which `[images]` sizes and gives its `srcset`.
fn image(call: &Call) -> Result<String, String> {
    let src = (call.arg("src", usize::MAX))
        .or(call.positional.first().map(String::as_str).filter(|p| p.contains('.')))
        .filter(|s| !s.is_empty())
        .ok_or("is an image shortcode whose file its arguments do not name (no `src`, no file as its first argument): Hugo found it by its template")?;
    let ext = src.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
    if src.contains(':') || !["jpg", "jpeg", "png", "webp", "gif"].contains(&ext.as_str()) {
        return Err(format!("is an image shortcode of {src:?}, not a JPEG, PNG, WebP or GIF of the site that `[images]` sizes: write its image in (an SVG or a URL as a Markdown image)"));
    }
    let alt = call
        .arg("alt", usize::MAX)
        .or(call.arg("caption", usize::MAX));
    Ok(format!(
        "![{}]({src})",
        alt.unwrap_or("").replace(['[', ']'], "")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conv(s: &str) -> (String, Vec<Unconverted>) {
        convert(s, &|p| (p == "post/a.md").then(|| "/post/a/".to_string()))
    }

    #[test]
    fn built_ins_become_markdown_and_embeds_links() {
        let (out, r) = conv("x {{< youtube ZJthWmvUzzc >}} y\n{{< figure src=\"/a.png\" alt=\"A\" caption=\"Cap\" >}}\n[a]({{< ref \"post/a.md\" >}})\n{{< highlight go >}}\nfn x\n{{< /highlight >}}\n{{< x user=\"u\" id=\"9\" >}}\n{{< gist spf13 7896402 >}}");
        assert!(r.is_empty(), "{r:?}");
        assert!(
            out.contains("https://www.youtube-nocookie.com/embed/ZJthWmvUzzc"),
            "{out}"
        );
        assert!(out.contains("![A](/a.png)\n\n*Cap*"), "{out}");
        assert!(out.contains("[a](/post/a/)"), "{out}");
        assert!(out.contains("```go\nfn x\n```"), "{out}");
        assert!(out.contains("https://x.com/u/status/9"), "{out}");
        assert!(
            out.contains("https://gist.github.com/spf13/7896402"),
            "{out}"
        );
        assert!(!out.contains("{{"), "{out}");
    }

    #[test]
    fn unknown_ones_are_reported_with_their_line_and_removed() {
        let (out, r) =
            conv("one\ntwo {{% notice tip %}}Inner{{% /notice %}} three\n{{< param x >}}\n");
        assert_eq!(out, "one\ntwo \n\n> [!TIP]\n> Inner\n\n three\n\n");
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].line, r[0].name.as_str()), (2, "notice"));
        assert_eq!((r[1].line, r[1].name.as_str()), (3, "param"));
        let (_, r) = conv("{{< ref \"nowhere.md\" >}}");
        assert!(r[0].why.contains("not a page"), "{r:?}");
    }

    /// Guards: issue 78.9. PaperMod's `math.inline`: its body holds Go template code and a
    /// blank line, and its closing tag is spelt `{{</ math.inline >}}`; none of it may reach
    /// the page (the body leaked whole). Every spelling of a closing tag closes it.
    #[test]
    fn papermods_math_inline_goes_with_its_body() {
        let body = "x\n{{< math.inline >}}\n{{ if or .Page.Params.math .Site.Params.math }}\n\n<link rel=\"stylesheet\" href=\"k.css\">\n{{ end }}\n{{</ math.inline >}}\ny\n";
        let (out, r) = conv(body);
        assert_eq!(out, "x\n\ny\n");
        assert_eq!((r[0].line, r[0].name.as_str()), (2, "math.inline"));
        for close in [
            "{{< /m.inline >}}",
            "{{</m.inline>}}",
            "{{</ m.inline >}}",
            "{{% /m.inline %}}",
            "{{< / m.inline >}}",
        ] {
            let (out, _) = conv(&format!(
                "a{{{{< m.inline >}}}}{{{{ .Get 0 }}}}\n\n{close}b"
            ));
            assert_eq!(out, "ab", "{close}");
        }
    }

    /// Issue 79.4: an escaped shortcode is shown as Hugo shows it — no backticks added
    /// (inside a code sample they were stray characters), spacing as written.
    #[test]
    fn an_escaped_shortcode_reads_as_hugo_shows_it() {
        let (out, r) = conv(
            "```md\n{{</* figure align=center src=\"image.jpg\" */>}}\n{{%/* notice */%}}\n```\n",
        );
        assert!(r.is_empty(), "{r:?}");
        assert_eq!(
            out,
            "```md\n{{< figure align=center src=\"image.jpg\" >}}\n{{% notice %}}\n```\n"
        );
    }

    /// Issue 81: a site's own image shortcodes become Markdown images (which `[images]`
    /// sizes); one whose arguments name no file is reported, saying it is an image.
    #[test]
    fn image_shortcodes_become_markdown_images_or_are_named() {
        let (out, r) = conv("{{< img src=\"a/b.jpg\" alt=\"B\" >}}\n{{< imgproc \"sunset.jpg\" Fill \"600x400\" >}}\n{{< imgproc sunset Fill \"600x400\" >}}");
        assert!(
            out.contains("![B](a/b.jpg)") && out.contains("![](sunset.jpg)"),
            "{out}"
        );
        assert_eq!(r.len(), 1, "{r:?}");
        assert!(r[0].why.contains("image shortcode"), "{r:?}");
    }

    #[test]
    fn an_inline_shortcode_goes_with_its_body() {
        let (out, r) = conv("a\n{{< css.inline >}}\n<style>.x{}</style>\n{{< /css.inline >}}\nb\n");
        assert_eq!(out, "a\n\nb\n");
        assert_eq!((r[0].line, r[0].name.as_str()), (2, "css.inline"));
        assert!(r[0].why.contains("template code"), "{r:?}");
    }
}
