//! Actions, their keys (the config's `[keys]` table), and the help generated
//! from them, so the footer and the `?` overlay never drift from the bindings.

use std::collections::HashMap;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use lineage_config::KeysConfig;

/// What a key asks for; its meaning may depend on the pane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Action {
    Quit,
    Help,
    NextTab,
    PrevTab,
    Documents,
    Origin,
    Clusters,
    Table,
    Tune,
    Events,
    Up,
    Down,
    Left,
    Right,
    PageUp,
    PageDown,
    Top,
    Bottom,
    Select,
    Back,
    Filter,
    Sort,
    Reverse,
    Exact,
    NextBlock,
    PrevBlock,
    NextNew,
    PrevNew,
    NextMatch,
    PrevMatch,
    Apply,
    Sweep,
    Adopt,
    Rescan,
    Versions,
    CompareVersion,
    Copies,
    Shared,
    Diff,
    Stale,
    Basis,
    Find,
    Cluster,
    SweepView,
    TakePoint,
    Copy,
    Edit,
    Export,
}

/// Every action with its config name and help text, in help order.
pub(crate) const ACTIONS: [(Action, &str, &str); 48] = [
    (Action::Quit, "quit", "quit"),
    (Action::Help, "help", "this help"),
    (Action::NextTab, "next_tab", "next pane"),
    (Action::PrevTab, "prev_tab", "previous pane"),
    (Action::Documents, "documents", "Documents pane"),
    (Action::Origin, "origin", "Origin pane"),
    (Action::Clusters, "clusters", "Clusters pane"),
    (Action::Table, "table", "Table pane"),
    (Action::Tune, "tune", "Tune pane"),
    (Action::Events, "events", "Events pane"),
    (Action::Up, "up", "up"),
    (Action::Down, "down", "down"),
    (Action::Left, "left", "left, previous choice"),
    (Action::Right, "right", "right, next choice"),
    (Action::PageUp, "page_up", "page up"),
    (Action::PageDown, "page_down", "page down"),
    (Action::Top, "top", "first"),
    (Action::Bottom, "bottom", "last"),
    (Action::Select, "select", "open, jump, compare, edit"),
    (Action::Back, "back", "back, clear"),
    (
        Action::Filter,
        "filter",
        "filter documents; Origin: search its text",
    ),
    (Action::Sort, "sort", "next sort key"),
    (Action::Reverse, "reverse", "reverse order"),
    (Action::Exact, "exact", "estimated ↔ exact"),
    (
        Action::NextBlock,
        "next_block",
        "next copied block (Compare: shared passage; two versions: change)",
    ),
    (
        Action::PrevBlock,
        "prev_block",
        "previous copied block (or passage, change)",
    ),
    (Action::NextNew, "next_new", "next passage new in the page"),
    (
        Action::PrevNew,
        "prev_new",
        "previous passage new in the page",
    ),
    (Action::NextMatch, "next_match", "next search match"),
    (Action::PrevMatch, "prev_match", "previous search match"),
    (Action::Apply, "apply", "shadow run: tuned vs live"),
    (Action::Sweep, "sweep", "sweep table sizes"),
    (Action::Adopt, "adopt", "make tuned settings live"),
    (Action::Rescan, "rescan", "rescan the folder"),
    (Action::Versions, "versions", "versions of the page shown"),
    (
        Action::CompareVersion,
        "compare_version",
        "compare a version with the one shown",
    ),
    (Action::Copies, "copies", "who copies the page shown"),
    (
        Action::Shared,
        "shared",
        "which pages carry the shown page's text",
    ),
    (
        Action::Diff,
        "diff",
        "what the page shown changed since its predecessor",
    ),
    (
        Action::Stale,
        "stale",
        "stale copies (Origin: of the page shown)",
    ),
    (
        Action::Basis,
        "basis",
        "changed/removed against: predecessor → previous folder → last release",
    ),
    (Action::Find, "find", "search every page's text"),
    (
        Action::Cluster,
        "cluster",
        "the page's cluster (back returns)",
    ),
    (
        Action::SweepView,
        "sweep_view",
        "sweep: chart ↔ table of numbers",
    ),
    (
        Action::TakePoint,
        "take_point",
        "sweep: the table's row into the form",
    ),
    (Action::Copy, "copy", "copy the document's path (OSC 52)"),
    (
        Action::Edit,
        "edit",
        "open the document in $VISUAL/$EDITOR at this line",
    ),
    (
        Action::Export,
        "export",
        "export the pane's rows to CSV or JSON, or every page to an HTML report",
    ),
];

impl Action {
    pub(crate) fn name(self) -> &'static str {
        ACTIONS.iter().find(|a| a.0 == self).map_or("", |a| a.1)
    }
}

/// A key with its modifiers (shift folded into the character).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    pub code: KeyCode,
    pub(crate) mods: KeyModifiers,
}

impl Key {
    /// The key a terminal event stands for. Shift is dropped: `G` arrives as
    /// shift+`G` and shift-tab as `BackTab`, so the key itself says it.
    pub(crate) fn from_event(e: &KeyEvent) -> Key {
        Key {
            code: e.code,
            mods: e.modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT),
        }
    }

    /// Parse `q`, `G`, `ctrl-n`, `alt-x`, `enter`, `pagedown`, `f5`, …
    pub(crate) fn parse(s: &str) -> Result<Key, String> {
        let mut mods = KeyModifiers::NONE;
        let mut rest = s;
        loop {
            if let Some(r) = rest.strip_prefix("ctrl-").filter(|r| !r.is_empty()) {
                mods |= KeyModifiers::CONTROL;
                rest = r;
            } else if let Some(r) = rest.strip_prefix("alt-").filter(|r| !r.is_empty()) {
                mods |= KeyModifiers::ALT;
                rest = r;
            } else {
                break;
            }
        }
        let mut chars = rest.chars();
        let code = match (chars.next(), chars.next()) {
            (Some(c), None) => KeyCode::Char(c),
            _ => match rest.to_ascii_lowercase().as_str() {
                "enter" => KeyCode::Enter,
                "esc" => KeyCode::Esc,
                "tab" => KeyCode::Tab,
                "backtab" => KeyCode::BackTab,
                "backspace" => KeyCode::Backspace,
                "delete" => KeyCode::Delete,
                "insert" => KeyCode::Insert,
                "space" => KeyCode::Char(' '),
                "up" => KeyCode::Up,
                "down" => KeyCode::Down,
                "left" => KeyCode::Left,
                "right" => KeyCode::Right,
                "home" => KeyCode::Home,
                "end" => KeyCode::End,
                "pageup" => KeyCode::PageUp,
                "pagedown" => KeyCode::PageDown,
                f if f.starts_with('f') => match f[1..].parse::<u8>() {
                    Ok(n @ 1..=12) => KeyCode::F(n),
                    _ => return Err(format!("unknown key '{s}'")),
                },
                _ => return Err(format!("unknown key '{s}'")),
            },
        };
        Ok(Key { code, mods })
    }

    /// How the key is written in the config and shown in the help.
    pub(crate) fn label(&self) -> String {
        let mut out = String::new();
        if self.mods.contains(KeyModifiers::CONTROL) {
            out.push_str("ctrl-");
        }
        if self.mods.contains(KeyModifiers::ALT) {
            out.push_str("alt-");
        }
        match self.code {
            KeyCode::Char(' ') => out.push_str("space"),
            KeyCode::Char(c) => out.push(c),
            KeyCode::F(n) => out.push_str(&format!("f{n}")),
            KeyCode::Enter => out.push_str("enter"),
            KeyCode::Esc => out.push_str("esc"),
            KeyCode::Tab => out.push_str("tab"),
            KeyCode::BackTab => out.push_str("backtab"),
            KeyCode::Backspace => out.push_str("backspace"),
            KeyCode::Delete => out.push_str("delete"),
            KeyCode::Insert => out.push_str("insert"),
            KeyCode::Up => out.push('↑'),
            KeyCode::Down => out.push('↓'),
            KeyCode::Left => out.push('←'),
            KeyCode::Right => out.push('→'),
            KeyCode::Home => out.push_str("home"),
            KeyCode::End => out.push_str("end"),
            KeyCode::PageUp => out.push_str("pgup"),
            KeyCode::PageDown => out.push_str("pgdn"),
            other => out.push_str(&format!("{other:?}")),
        }
        out
    }
}

/// Keys → actions, and per action its keys in the configured order.
#[derive(Clone, Debug)]
pub struct Keymap {
    by_key: HashMap<Key, Action>,
    keys: Vec<(Action, Vec<Key>)>,
}

impl Keymap {
    /// The bindings of `[keys]`; an unknown key name or a key bound to two
    /// actions is an error naming both.
    pub(crate) fn from_config(cfg: &KeysConfig) -> Result<Keymap, String> {
        let mut by_key = HashMap::new();
        let mut keys = Vec::new();
        for (name, spec) in cfg.bindings() {
            let action = ACTIONS
                .iter()
                .find(|a| a.1 == name)
                .map(|a| a.0)
                .ok_or_else(|| format!("[keys] {name}: no such action"))?;
            let mut list = Vec::new();
            for word in spec.split_whitespace() {
                let key = Key::parse(word).map_err(|e| format!("[keys] {name}: {e}"))?;
                if let Some(other) = by_key.insert(key, action) {
                    return Err(format!(
                        "[keys] '{word}' is bound to both {} and {name}",
                        other.name()
                    ));
                }
                list.push(key);
            }
            keys.push((action, list));
        }
        Ok(Keymap { by_key, keys })
    }

    pub(crate) fn action(&self, key: &KeyEvent) -> Option<Action> {
        self.by_key.get(&Key::from_event(key)).copied()
    }

    /// The first key of `action`, as shown in the footer ("" when unbound).
    pub(crate) fn first(&self, action: Action) -> String {
        self.keys_of(action)
            .first()
            .map_or(String::new(), Key::label)
    }

    pub(crate) fn keys_of(&self, action: Action) -> &[Key] {
        self.keys
            .iter()
            .find(|k| k.0 == action)
            .map_or(&[], |k| k.1.as_slice())
    }

    /// One line per action for the help overlay: (keys, description).
    pub(crate) fn help(&self) -> Vec<(String, &'static str)> {
        ACTIONS
            .iter()
            .map(|&(action, _, text)| {
                let keys: Vec<String> = self.keys_of(action).iter().map(Key::label).collect();
                (keys.join(" "), text)
            })
            .collect()
    }
}

impl Default for Keymap {
    fn default() -> Keymap {
        Keymap::from_config(&KeysConfig::default()).expect("the default keys are valid")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, mods)
    }

    #[test]
    fn every_action_has_a_config_name_and_the_defaults_parse() {
        let names: Vec<&str> = KeysConfig::default().bindings().map(|b| b.0).to_vec();
        let ours: Vec<&str> = ACTIONS.iter().map(|a| a.1).collect();
        assert_eq!(names, ours);
        let k = Keymap::default();
        assert_eq!(
            k.action(&press(KeyCode::Char('G'), KeyModifiers::SHIFT)),
            Some(Action::Bottom)
        );
        assert_eq!(
            k.action(&press(KeyCode::BackTab, KeyModifiers::SHIFT)),
            Some(Action::PrevTab)
        );
        assert_eq!(
            k.action(&press(KeyCode::Char('q'), KeyModifiers::CONTROL)),
            None
        );
    }

    #[test]
    fn rebinding_and_its_errors() {
        let cfg = KeysConfig {
            quit: "ctrl-q f10".into(),
            ..KeysConfig::default()
        };
        let k = Keymap::from_config(&cfg).unwrap();
        assert_eq!(
            k.action(&press(KeyCode::Char('q'), KeyModifiers::CONTROL)),
            Some(Action::Quit)
        );
        assert_eq!(
            k.action(&press(KeyCode::F(10), KeyModifiers::NONE)),
            Some(Action::Quit)
        );
        assert_eq!(
            k.action(&press(KeyCode::Char('q'), KeyModifiers::NONE)),
            None
        );
        assert_eq!(k.first(Action::Quit), "ctrl-q");

        let twice = KeysConfig {
            quit: "j".into(),
            ..KeysConfig::default()
        };
        let e = Keymap::from_config(&twice).unwrap_err();
        assert!(
            e.contains("'j'") && e.contains("quit") && e.contains("down"),
            "{e}"
        );
        let bad = KeysConfig {
            help: "hyper-x".into(),
            ..KeysConfig::default()
        };
        assert!(Keymap::from_config(&bad).unwrap_err().contains("hyper-x"));
    }
}
