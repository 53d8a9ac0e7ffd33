//! Styles by role, for a dark or light background, or none at all when
//! `NO_COLOR` is set (then only bold, underline, italic and reverse video).

use ratatui::style::{Color, Modifier, Style};

use lineage_config::ThemeName;

/// A style for each role on screen.
#[derive(Clone, Debug)]
pub struct Theme {
    /// Plain text.
    pub base: Style,
    /// Section titles (in the help overlay).
    pub title: Style,
    /// A pane's name in the tab bar, when not the one shown.
    pub tab: Style,
    pub(crate) tab_active: Style,
    /// Table headers and field labels.
    pub header: Style,
    /// The row under the cursor.
    pub selected: Style,
    pub(crate) muted: Style,
    /// A pane's border when it does not have the focus.
    pub border: Style,
    /// Keys and figures to pick out (help, prompts, similarities); the
    /// focused pane's border.
    pub key: Style,
    /// Errors.
    pub error: Style,
    pub(crate) warning: Style,
    /// Good news: idle, a new version, a message that something was done.
    pub good: Style,
    /// Text being typed into a prompt.
    pub input: Style,
    /// Characters the Documents filter matched.
    pub matched: Style,
    /// Search matches in the Origin text: colours of their own, as they lie
    /// over any origin's colour.
    pub found: Style,
    /// The search match brought into view.
    pub(crate) current_match: Style,
    /// The Tune pane's progress gauge.
    pub gauge: Style,
    /// The Table pane's hit rate chart (and a sweep line).
    pub hit: Style,
    /// The Table pane's evictions chart (and a sweep line).
    pub eviction: Style,
    /// The Table pane's bucket fill bars (and a sweep line).
    pub bar: Style,
    /// The selected copied block in the Origin pane (over its origin colour).
    pub(crate) block_selected: Style,
    /// Shared passages in a comparison.
    pub shared: Style,
    /// Copied text, one style per origin (see [`Theme::origin`]).
    pub(crate) palette: Vec<Style>,
    /// What the Origins legend shows in an origin's style: a block of its
    /// colour, or without colours a word (bold or italic spaces look like
    /// any other spaces).
    pub(crate) swatch: &'static str,
}

impl Theme {
    /// The theme `name`, or the plain one (no colours) when `no_color`.
    pub fn new(name: ThemeName, no_color: bool) -> Theme {
        if no_color {
            return Theme::plain();
        }
        let b = Modifier::BOLD;
        let fg = |c: Color| Style::new().fg(c);
        let bg = |c: Color| Style::new().bg(c);
        match name {
            ThemeName::Dark => Theme {
                base: Style::new(),
                title: fg(Color::Cyan).add_modifier(b),
                tab: fg(Color::Gray),
                tab_active: fg(Color::Black).bg(Color::Cyan).add_modifier(b),
                header: fg(Color::Yellow).add_modifier(b),
                selected: bg(Color::DarkGray).add_modifier(b),
                muted: fg(Color::DarkGray),
                border: fg(Color::DarkGray),
                key: fg(Color::Cyan).add_modifier(b),
                error: fg(Color::LightRed).add_modifier(b),
                warning: fg(Color::Yellow),
                good: fg(Color::LightGreen),
                input: fg(Color::White).bg(Color::Blue),
                matched: fg(Color::LightYellow).add_modifier(b | Modifier::UNDERLINED),
                found: fg(Color::Black)
                    .bg(Color::White)
                    .add_modifier(b | Modifier::UNDERLINED),
                current_match: fg(Color::White).bg(Color::Red).add_modifier(b),
                gauge: fg(Color::Cyan).bg(Color::Black),
                hit: fg(Color::LightGreen),
                eviction: fg(Color::LightRed),
                bar: fg(Color::LightBlue),
                block_selected: Style::new().add_modifier(Modifier::REVERSED | b),
                shared: fg(Color::Black).bg(Color::Yellow),
                palette: [
                    (Color::Black, Color::LightBlue),
                    (Color::Black, Color::LightGreen),
                    (Color::Black, Color::LightMagenta),
                    (Color::Black, Color::LightYellow),
                    (Color::Black, Color::LightCyan),
                    (Color::Black, Color::LightRed),
                    (Color::White, Color::Blue),
                    (Color::White, Color::Magenta),
                    (Color::Black, Color::Rgb(255, 175, 95)),
                    (Color::Black, Color::Rgb(175, 215, 135)),
                    (Color::Black, Color::Rgb(215, 175, 255)),
                    (Color::Black, Color::Rgb(135, 215, 215)),
                ]
                .map(|(f, b)| Style::new().fg(f).bg(b))
                .to_vec(),
                swatch: "    ",
            },
            ThemeName::Light => Theme {
                base: Style::new(),
                title: fg(Color::Blue).add_modifier(b),
                tab: fg(Color::DarkGray),
                tab_active: fg(Color::White).bg(Color::Blue).add_modifier(b),
                header: fg(Color::Magenta).add_modifier(b),
                selected: bg(Color::Rgb(215, 215, 235)).add_modifier(b),
                // ANSI grey is light grey on a light background: the
                // status separators and hints all but vanished (issue 41).
                muted: fg(Color::Rgb(96, 96, 96)),
                border: fg(Color::Gray),
                key: fg(Color::Blue).add_modifier(b),
                error: fg(Color::Red).add_modifier(b),
                warning: fg(Color::Rgb(175, 95, 0)),
                good: fg(Color::Green),
                input: fg(Color::Black).bg(Color::Rgb(255, 255, 175)),
                matched: fg(Color::Magenta).add_modifier(b | Modifier::UNDERLINED),
                found: fg(Color::White)
                    .bg(Color::Black)
                    .add_modifier(b | Modifier::UNDERLINED),
                current_match: fg(Color::White).bg(Color::Red).add_modifier(b),
                gauge: fg(Color::Blue).bg(Color::Rgb(230, 230, 230)),
                hit: fg(Color::Green),
                eviction: fg(Color::Red),
                bar: fg(Color::Blue),
                block_selected: Style::new().add_modifier(Modifier::REVERSED | b),
                shared: fg(Color::Black).bg(Color::Rgb(255, 215, 95)),
                palette: [
                    Color::Rgb(175, 215, 255),
                    Color::Rgb(175, 255, 175),
                    Color::Rgb(255, 175, 255),
                    Color::Rgb(255, 255, 135),
                    Color::Rgb(175, 255, 255),
                    Color::Rgb(255, 175, 175),
                    Color::Rgb(215, 215, 255),
                    Color::Rgb(255, 215, 175),
                    Color::Rgb(215, 255, 215),
                    Color::Rgb(235, 215, 255),
                    Color::Rgb(215, 235, 235),
                    Color::Rgb(255, 235, 205),
                ]
                .map(|c| Style::new().fg(Color::Black).bg(c))
                .to_vec(),
                swatch: "    ",
            },
        }
    }

    /// No colour at all (NO_COLOR): structure by modifiers only.
    fn plain() -> Theme {
        let m = |m: Modifier| Style::new().add_modifier(m);
        Theme {
            base: Style::new(),
            title: m(Modifier::BOLD),
            tab: Style::new(),
            tab_active: m(Modifier::REVERSED | Modifier::BOLD),
            header: m(Modifier::BOLD | Modifier::UNDERLINED),
            selected: m(Modifier::REVERSED),
            muted: Style::new(),
            border: Style::new(),
            key: m(Modifier::BOLD),
            error: m(Modifier::BOLD),
            warning: m(Modifier::BOLD),
            good: Style::new(),
            input: m(Modifier::UNDERLINED),
            matched: m(Modifier::BOLD | Modifier::UNDERLINED),
            found: m(Modifier::BOLD | Modifier::UNDERLINED),
            current_match: m(Modifier::REVERSED | Modifier::BOLD),
            gauge: Style::new(),
            hit: Style::new(),
            eviction: Style::new(),
            bar: Style::new(),
            block_selected: m(Modifier::REVERSED | Modifier::BOLD),
            shared: m(Modifier::UNDERLINED),
            // Every combination of bold, dim (never both: terminals end
            // them together), italic and underline; reverse video stays the
            // selected block's.
            palette: {
                let (b, d, i, u) = (
                    Modifier::BOLD,
                    Modifier::DIM,
                    Modifier::ITALIC,
                    Modifier::UNDERLINED,
                );
                [
                    u,
                    i,
                    b,
                    d,
                    u | i,
                    b | u,
                    b | i,
                    d | u,
                    d | i,
                    b | u | i,
                    d | u | i,
                ]
                .map(m)
                .to_vec()
            },
            swatch: "text",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_colour_origins_still_have_many_styles() {
        let t = Theme::new(ThemeName::Dark, true);
        let mut seen = t.palette.clone();
        seen.dedup();
        seen.sort_by_key(|s| s.add_modifier.bits());
        seen.dedup();
        assert!(seen.len() >= 8, "{seen:?}");
        for s in &t.palette {
            assert!(s.fg.is_none() && s.bg.is_none(), "{s:?}");
            assert_ne!(*s, t.base);
            assert!(
                !s.add_modifier.contains(Modifier::REVERSED),
                "the selection's"
            );
        }
    }
}
