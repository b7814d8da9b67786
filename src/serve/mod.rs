//! The ladder service (arena serve): owners upload bot folders over HTTP and
//! the service plays them against each other. This room holds its parts;
//! `archive` is the bot folder as a tar.gz (packing for `arena submit`,
//! unpacking an upload safely).

pub mod archive;
