//! `stave tx group …`, `stave tx takedown …` and `stave tx flag …`: the
//! group, takedown and flag actions. The signer is a keyring key
//! (`--from`) or a node home's operator key (`--home`, for the votes of
//! ACTIVE validators). Cids are hex; public keys are hex or keyring names.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::query::resolve_pubkey;
use super::rights::unhex;
use super::tx::{submit_as, TxOpts};
use super::{keys, Output};
use crate::config::Home;
use crate::keyspaces::groups::{ApplyGroup, RotateTakedownAuthority, SetGroupMember, VoteGroup};
use crate::keyspaces::takedowns::{
    ClearFlag, CounterNotice, SetFlag, TakedownRequest, TakedownResolve, ValidatorTakedownRequest,
};
use crate::proto::governance as pb;
use crate::tx::Action;

/// Who signs, and where to send.
#[derive(Args, Debug, Clone)]
pub struct GovOpts {
    /// Key name in the keyring.
    #[arg(long, conflicts_with = "home", required_unless_present = "home")]
    pub from: Option<String>,
    /// A Stave home whose operator key signs (a validator's vote).
    #[arg(long)]
    pub home: Option<PathBuf>,
    /// The node's gRPC endpoint.
    #[arg(long, default_value = "http://127.0.0.1:9090")]
    pub node: String,
    #[arg(long, env = "STAVE_KEYRING", default_value_t = keys::default_keyring())]
    pub keyring_dir: String,
    /// Return after CheckTx instead of waiting for the commit.
    #[arg(long)]
    pub no_wait: bool,
}

impl GovOpts {
    fn key(&self) -> anyhow::Result<ed25519_dalek::SigningKey> {
        match (&self.from, &self.home) {
            (Some(name), _) => keys::load(&self.keyring_dir, name),
            (None, Some(home)) => {
                crate::keyfile::load_ed25519(&Home::new(home.clone()).operator_key())
            }
            (None, None) => anyhow::bail!("give --from NAME or --home DIR"),
        }
    }

    fn tx_opts(&self) -> TxOpts {
        TxOpts {
            from: String::new(),
            node: self.node.clone(),
            keyring_dir: self.keyring_dir.clone(),
            no_wait: self.no_wait,
            nonce: None,
            memo: String::new(),
            hex: false,
            gas: None,
            gas_adjustment: super::tx::DEFAULT_GAS_ADJUSTMENT,
        }
    }
}

#[derive(Subcommand, Debug)]
pub enum GroupTx {
    /// Apply for group ID (an ADMIT election of the ACTIVE validators).
    Apply {
        id: String,
        /// A takedown authority key (hex or keyring name); repeat for several.
        #[arg(long = "authority", required = true)]
        authorities: Vec<String>,
        /// A member publisher key; repeat for several.
        #[arg(long = "member")]
        members: Vec<String>,
        #[command(flatten)]
        opts: GovOpts,
    },
    /// Vote (as an ACTIVE validator) to admit ID, or to suspend or remove it.
    Vote {
        id: String,
        #[arg(long, conflicts_with = "remove")]
        suspend: bool,
        #[arg(long)]
        remove: bool,
        /// Vote against.
        #[arg(long)]
        reject: bool,
        #[command(flatten)]
        opts: GovOpts,
    },
    /// Replace the takedown authorities of ID (signed by a current one).
    Rotate {
        id: String,
        #[arg(long = "authority", required = true)]
        authorities: Vec<String>,
        #[command(flatten)]
        opts: GovOpts,
    },
    /// Add (or with --remove, remove) member KEY of ID.
    Member {
        id: String,
        key: String,
        #[arg(long)]
        remove: bool,
        #[command(flatten)]
        opts: GovOpts,
    },
}

#[derive(Subcommand, Debug)]
pub enum TakedownTx {
    /// Request a takedown of CID (a takedown authority of its group; with
    /// --by-validator an ACTIVE validator, for content with no group or
    /// whose group is SUSPENDED or REMOVED).
    Request {
        cid: String,
        #[arg(long)]
        reason: String,
        /// SHA-256 of the evidence, hex.
        #[arg(long)]
        evidence: String,
        /// Request as an ACTIVE validator (sign with --home of the node, or
        /// its operator key).
        #[arg(long)]
        by_validator: bool,
        #[command(flatten)]
        opts: GovOpts,
    },
    /// File a counter-notice for CID (an OWNER of it).
    Counter {
        cid: String,
        #[arg(long)]
        content: String,
        #[command(flatten)]
        opts: GovOpts,
    },
    /// Vote (as an ACTIVE validator) to confirm, or with --dismiss dismiss.
    Resolve {
        cid: String,
        #[arg(long)]
        dismiss: bool,
        #[command(flatten)]
        opts: GovOpts,
    },
}

#[derive(Subcommand, Debug)]
pub enum FlagTx {
    /// Flag CID in JURISDICTION (ISO 3166-1 alpha-2).
    Set {
        cid: String,
        jurisdiction: String,
        #[arg(long, default_value = "")]
        reason: String,
        #[command(flatten)]
        opts: GovOpts,
    },
    /// Clear the flag of CID in JURISDICTION.
    Clear {
        cid: String,
        jurisdiction: String,
        #[command(flatten)]
        opts: GovOpts,
    },
}

fn pubkeys(v: &[String], keyring: &str) -> anyhow::Result<Vec<Vec<u8>>> {
    v.iter().map(|k| resolve_pubkey(k, keyring)).collect()
}

fn group_action(cmd: GroupTx) -> anyhow::Result<(Action, GovOpts)> {
    Ok(match cmd {
        GroupTx::Apply {
            id,
            authorities,
            members,
            opts,
        } => {
            let a = ApplyGroup {
                group_id: id,
                takedown_authorities: pubkeys(&authorities, &opts.keyring_dir)?,
                members: pubkeys(&members, &opts.keyring_dir)?,
            };
            (Action::ApplyGroup(a), opts)
        }
        GroupTx::Vote {
            id,
            suspend,
            remove,
            reject,
            opts,
        } => {
            let kind = match (suspend, remove) {
                (true, _) => pb::ElectionKind::Suspend,
                (_, true) => pb::ElectionKind::Remove,
                _ => pb::ElectionKind::Admit,
            };
            let v = VoteGroup {
                group_id: id,
                kind: kind as i32,
                approve: !reject,
            };
            (Action::VoteGroup(v), opts)
        }
        GroupTx::Rotate {
            id,
            authorities,
            opts,
        } => {
            let r = RotateTakedownAuthority {
                group_id: id,
                takedown_authorities: pubkeys(&authorities, &opts.keyring_dir)?,
            };
            (Action::RotateTakedownAuthority(r), opts)
        }
        GroupTx::Member {
            id,
            key,
            remove,
            opts,
        } => {
            let m = SetGroupMember {
                group_id: id,
                member: resolve_pubkey(&key, &opts.keyring_dir)?,
                add: !remove,
            };
            (Action::SetGroupMember(m), opts)
        }
    })
}

fn takedown_action(cmd: TakedownTx) -> anyhow::Result<(Action, GovOpts)> {
    Ok(match cmd {
        TakedownTx::Request {
            cid,
            reason,
            evidence,
            by_validator,
            opts,
        } => {
            let (cid, evidence_hash) = (unhex("cid", &cid)?, unhex("evidence hash", &evidence)?);
            let a = if by_validator {
                Action::ValidatorTakedownRequest(ValidatorTakedownRequest {
                    cid,
                    reason,
                    evidence_hash,
                })
            } else {
                Action::TakedownRequest(TakedownRequest {
                    cid,
                    reason,
                    evidence_hash,
                })
            };
            (a, opts)
        }
        TakedownTx::Counter { cid, content, opts } => {
            let c = CounterNotice {
                cid: unhex("cid", &cid)?,
                content: content.into_bytes(),
            };
            (Action::CounterNotice(c), opts)
        }
        TakedownTx::Resolve { cid, dismiss, opts } => {
            let r = TakedownResolve {
                cid: unhex("cid", &cid)?,
                confirm: !dismiss,
            };
            (Action::TakedownResolve(r), opts)
        }
    })
}

fn flag_action(cmd: FlagTx) -> anyhow::Result<(Action, GovOpts)> {
    Ok(match cmd {
        FlagTx::Set {
            cid,
            jurisdiction,
            reason,
            opts,
        } => {
            let f = SetFlag {
                cid: unhex("cid", &cid)?,
                jurisdiction,
                reason,
            };
            (Action::SetFlag(f), opts)
        }
        FlagTx::Clear {
            cid,
            jurisdiction,
            opts,
        } => {
            let f = ClearFlag {
                cid: unhex("cid", &cid)?,
                jurisdiction,
            };
            (Action::ClearFlag(f), opts)
        }
    })
}

/// One of the three families, as parsed.
#[derive(Debug)]
pub enum GovTx {
    Group(GroupTx),
    Takedown(TakedownTx),
    Flag(FlagTx),
}

pub async fn run(cmd: GovTx, out: Output) -> anyhow::Result<()> {
    let (action, opts) = match cmd {
        GovTx::Group(c) => group_action(c)?,
        GovTx::Takedown(c) => takedown_action(c)?,
        GovTx::Flag(c) => flag_action(c)?,
    };
    submit_as(&opts.key()?, vec![action], &opts.tx_opts(), out).await
}
