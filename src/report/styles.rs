//! All colour goes through one `Styles` value, plain unless stdout is a terminal and
//! `NO_COLOR` is unset (<https://no-color.org>), or `--color` says otherwise.

use owo_colors::Style;
use std::io::IsTerminal;

#[derive(Clone, Copy, Default)]
pub(crate) struct Styles {
    pub good: Style,
    pub warn: Style,
    pub bad: Style,
    pub dim: Style,
    pub bold: Style,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

impl Styles {
    pub(crate) fn new(choice: ColorChoice) -> Self {
        let on = match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::io::stdout().is_terminal()
                    && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
        };
        if !on {
            return Styles::default();
        }
        // The backstop keeps an `ESC[…m` only where gate writes colour.
        crate::terminal::colours_on();
        Styles {
            good: Style::new().green(),
            warn: Style::new().yellow(),
            bad: Style::new().red().bold(),
            dim: Style::new().dimmed(),
            bold: Style::new().bold(),
        }
    }
}
