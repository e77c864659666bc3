//! What a script call ends in. Every variant but [`Failure::Engine`] is a
//! deterministic result: the same source, input and limits give the same
//! variant, text and fuel on every node.

/// The end of one call and the fuel it burned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The result's canonical JSON, or why there is none.
    pub result: Result<String, Failure>,
    /// Fuel the call itself burned (instantiation is a fixed charge,
    /// outside this figure). Equal to the limit when fuel ran out.
    pub fuel: u64,
}

/// Why a call produced no result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    #[error("the source is not UTF-8 (first bad byte at {0})")]
    NotUtf8(usize),
    #[error("the source is {size} bytes, over the limit of {max}")]
    SourceTooLarge { size: usize, max: u32 },
    #[error("the input is {size} bytes, over the limit of {max}")]
    InputTooLarge { size: usize, max: u32 },
    #[error("the source does not compile: {0}")]
    Syntax(String),
    #[error("the script threw: {0}")]
    Threw(String),
    #[error("the script ran out of memory: {0}")]
    OutOfMemory(String),
    #[error("the script overflowed its stack: {0}")]
    StackOverflow(String),
    #[error("the script ran out of fuel")]
    OutOfFuel,
    #[error("the script defines no function {0:?}")]
    NoFunction(String),
    #[error("the script's result is refused: {0}")]
    BadResult(String),
    #[error("the input is refused: {0}")]
    BadInput(String),
    /// The guest trapped some way other than running out of fuel; no
    /// golden vector does. (A native stack overflow is [`Failure::Engine`]:
    /// its depth is the host's.)
    #[error("the guest trapped: {0}")]
    Trap(String),
    /// The node itself failed (the guest did not instantiate, a thread did
    /// not start): not a property of the script, never a consensus result.
    #[error("script engine failure: {0}")]
    Engine(String),
}

impl Failure {
    /// A stable number per kind, for tx codes and the CLI.
    pub fn code(&self) -> u32 {
        match self {
            Failure::NotUtf8(_) => 1,
            Failure::SourceTooLarge { .. } => 2,
            Failure::InputTooLarge { .. } => 3,
            Failure::Syntax(_) => 4,
            Failure::Threw(_) => 5,
            Failure::OutOfMemory(_) => 6,
            Failure::StackOverflow(_) => 7,
            Failure::OutOfFuel => 8,
            Failure::NoFunction(_) => 9,
            Failure::BadResult(_) => 10,
            Failure::BadInput(_) => 11,
            Failure::Trap(_) => 12,
            Failure::Engine(_) => 13,
        }
    }

    /// The kind's name, as the CLI and docs print it.
    pub fn kind(&self) -> &'static str {
        match self {
            Failure::NotUtf8(_) => "NOT_UTF8",
            Failure::SourceTooLarge { .. } => "SOURCE_TOO_LARGE",
            Failure::InputTooLarge { .. } => "INPUT_TOO_LARGE",
            Failure::Syntax(_) => "SYNTAX",
            Failure::Threw(_) => "THREW",
            Failure::OutOfMemory(_) => "OUT_OF_MEMORY",
            Failure::StackOverflow(_) => "STACK_OVERFLOW",
            Failure::OutOfFuel => "OUT_OF_FUEL",
            Failure::NoFunction(_) => "NO_FUNCTION",
            Failure::BadResult(_) => "BAD_RESULT",
            Failure::BadInput(_) => "BAD_INPUT",
            Failure::Trap(_) => "TRAP",
            Failure::Engine(_) => "ENGINE",
        }
    }
}
