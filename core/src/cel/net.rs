//! The Kubernetes IP and CIDR libraries (`ip()`, `cidr()` and their methods), over
//! `core::net` addresses.
//!
//! Parsing follows Go's `netip.ParseAddr` / `netip.ParsePrefix` as Kubernetes uses
//! them: dotted-quad IPv4 without leading zeros, IPv6 in any RFC 4291 form, and two
//! Kubernetes restrictions on top: no IPv4-mapped IPv6 addresses (`::ffff:1.2.3.4`)
//! and no zones (`fe80::1%eth0`). The address classes (`isLoopback`, …) are Go's.

use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::alloc_prelude::*;

/// A network prefix: an address and a prefix length. The address keeps its host bits
/// (`cidr("10.0.0.1/8").ip()` is `10.0.0.1`); [`Cidr::masked`] clears them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Cidr {
    pub(super) addr: IpAddr,
    pub(super) bits: u8,
}

/// Parses an IP address as the Kubernetes `ip()` function does; the error is the
/// reason shown after the value.
pub(super) fn parse_ip(s: &str) -> Result<IpAddr, &'static str> {
    if s.contains('%') {
        return Err("IP address with zone value is not allowed");
    }
    let addr: IpAddr = s.parse().map_err(|_| "not a valid IP address")?;
    if let IpAddr::V6(v6) = addr
        && v6.to_ipv4_mapped().is_some()
    {
        return Err("IPv4-mapped IPv6 address is not allowed");
    }
    Ok(addr)
}

/// Parses a CIDR (`addr/bits`) as the Kubernetes `cidr()` function does.
pub(super) fn parse_cidr(s: &str) -> Result<Cidr, &'static str> {
    let (addr, bits) = s.split_once('/').ok_or("no '/' in the network address")?;
    let addr = parse_ip(addr)?;
    let max = max_bits(addr);
    let valid_digits = !bits.is_empty()
        && bits.bytes().all(|b| b.is_ascii_digit())
        && (bits == "0" || !bits.starts_with('0'));
    let bits = bits
        .parse::<u8>()
        .ok()
        .filter(|b| valid_digits && *b <= max)
        .ok_or("bad prefix length")?;
    Ok(Cidr { addr, bits })
}

fn max_bits(addr: IpAddr) -> u8 {
    match addr {
        IpAddr::V4(_) => 32,
        IpAddr::V6(_) => 128,
    }
}

/// Whether `s` is an IP address in canonical form (Go's `netip.Addr.String()` of it
/// gives `s` back). `Err` when it is not an IP address.
pub(super) fn is_canonical(s: &str) -> Result<bool, &'static str> {
    let addr = parse_ip(s)?;
    Ok(addr.to_string() == s)
}

/// The address family: 4 or 6.
pub(super) fn family(addr: IpAddr) -> i64 {
    match addr {
        IpAddr::V4(_) => 4,
        IpAddr::V6(_) => 6,
    }
}

pub(super) fn is_unspecified(addr: IpAddr) -> bool {
    addr.is_unspecified()
}

pub(super) fn is_loopback(addr: IpAddr) -> bool {
    addr.is_loopback()
}

/// 224.0.0.0/24 and ff02::/16 (any flags nibble), as Go's `IsLinkLocalMulticast`.
pub(super) fn is_link_local_multicast(addr: IpAddr) -> bool {
    match addr {
        IpAddr::V4(v4) => {
            let [a, b, c, _] = v4.octets();
            a == 224 && b == 0 && c == 0
        }
        IpAddr::V6(v6) => v6.segments()[0] & 0xff0f == 0xff02,
    }
}

/// 169.254.0.0/16 and fe80::/10, as Go's `IsLinkLocalUnicast`.
pub(super) fn is_link_local_unicast(addr: IpAddr) -> bool {
    match addr {
        IpAddr::V4(v4) => {
            let [a, b, _, _] = v4.octets();
            a == 169 && b == 254
        }
        IpAddr::V6(v6) => v6.segments()[0] & 0xffc0 == 0xfe80,
    }
}

/// Go's `IsGlobalUnicast`: not unspecified, loopback, multicast, link-local unicast
/// or the IPv4 broadcast address (private ranges are global unicast).
pub(super) fn is_global_unicast(addr: IpAddr) -> bool {
    if let IpAddr::V4(v4) = addr
        && v4 == Ipv4Addr::BROADCAST
    {
        return false;
    }
    !(addr.is_unspecified()
        || addr.is_loopback()
        || addr.is_multicast()
        || is_link_local_unicast(addr))
}

fn to_bits(addr: IpAddr) -> u128 {
    match addr {
        IpAddr::V4(v4) => u128::from(v4.to_bits()),
        IpAddr::V6(v6) => v6.to_bits(),
    }
}

/// The netmask of `bits` leading ones within a `width`-bit address.
fn mask(bits: u8, width: u8) -> u128 {
    let all = if width == 32 {
        u128::from(u32::MAX)
    } else {
        u128::MAX
    };
    if bits == 0 {
        0
    } else {
        all & !((1u128 << (width - bits)) - 1)
    }
}

impl Cidr {
    /// The prefix with its host bits cleared.
    pub(super) fn masked(self) -> Cidr {
        let width = max_bits(self.addr);
        let bits = to_bits(self.addr) & mask(self.bits, width);
        let addr = match self.addr {
            IpAddr::V4(_) => {
                IpAddr::V4(Ipv4Addr::from_bits(u32::try_from(bits).unwrap_or(u32::MAX)))
            }
            IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::from_bits(bits)),
        };
        Cidr {
            addr,
            bits: self.bits,
        }
    }

    /// Whether `addr` is inside the prefix (never across families).
    pub(super) fn contains_ip(self, addr: IpAddr) -> bool {
        if family(addr) != family(self.addr) {
            return false;
        }
        let m = mask(self.bits, max_bits(self.addr));
        to_bits(addr) & m == to_bits(self.addr) & m
    }

    /// Whether `other` is a sub-prefix of this one.
    pub(super) fn contains_cidr(self, other: Cidr) -> bool {
        self.bits <= other.bits && self.contains_ip(other.addr)
    }
}

impl core::fmt::Display for Cidr {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}/{}", self.addr, self.bits)
    }
}
