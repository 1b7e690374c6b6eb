//! System calls traced and faulted with strace, shared by the faults mode, the power-loss
//! mode and the concurrent mode's forced orders: where a fault can be injected and the
//! errors each call may get ([`points`]), and a command run under strace, traced or with one
//! call failed or stopped ([`strace`]).

pub mod points;
pub mod strace;
