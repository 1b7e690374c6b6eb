//! Where a run's CPU time goes: the harness itself (our library, the model, the twin) and its
//! waited-for children (git), read from `/proc/self/stat` on Linux. It tells a user whether
//! a slow gate is git's process cost or ours.

/// CPU seconds of this process and of its waited-for children at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CpuTimes {
    /// User + system seconds of this process (every thread).
    pub own: f64,
    /// User + system seconds of the children this process has waited for.
    pub children: f64,
}

impl CpuTimes {
    /// The times now; `None` where `/proc/self/stat` cannot be read (not Linux).
    pub fn now() -> Option<CpuTimes> {
        parse_stat(&std::fs::read_to_string("/proc/self/stat").ok()?)
    }

    /// The times spent since `earlier`.
    pub fn since(self, earlier: CpuTimes) -> CpuTimes {
        CpuTimes {
            own: (self.own - earlier.own).max(0.0),
            children: (self.children - earlier.children).max(0.0),
        }
    }
}

/// Clock ticks per second of `/proc` times: `USER_HZ`, 100 on every Linux architecture
/// the kernel exports to user space.
const USER_HZ: f64 = 100.0;

/// utime, stime, cutime and cstime are fields 14 to 17 of `/proc/PID/stat`; the second
/// field (the command name) may hold spaces and parentheses, so counting starts after its
/// last `)`.
fn parse_stat(stat: &str) -> Option<CpuTimes> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<f64> = rest
        .split_whitespace()
        .skip(11)
        .take(4)
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    (f.len() == 4).then(|| CpuTimes {
        own: (f[0] + f[1]) / USER_HZ,
        children: (f[2] + f[3]) / USER_HZ,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_after_a_command_name_with_spaces_and_parens() {
        let stat = "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 700 300 20 0 3 0";
        let t = parse_stat(stat).unwrap();
        assert_eq!(
            t,
            CpuTimes {
                own: 3.0,
                children: 10.0
            }
        );
        assert_eq!(parse_stat("1 (x) S 1 2"), None);
    }
}
