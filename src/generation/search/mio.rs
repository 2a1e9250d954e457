//! The MIO archive (EvoMaster): one population per testing target, each ranked
//! only by its own target's heuristic; a covered target keeps its single
//! shortest test; sampling favours the population that improved last
//! (feedback-directed counters). The covered targets' tests are the final suite.

use indexmap::IndexMap;
use rand::Rng;

use crate::generation::values::Rng64;
use std::sync::Arc;

/// MIO's parameters; defaults are EvoMaster's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MioConfig {
    /// Population size per target at the start (n); shrinks to 1 at the focus point.
    pub population: usize,
    /// Probability of sampling a new test rather than mutating an archived one
    /// at the start (P_r); falls to 0 at the focus point.
    pub random_sampling: f64,
    /// Share of the budget after which the search is focused (F).
    pub focus: f64,
    /// Mutations applied to a sampled test at the start; rises to `end_mutations`.
    pub start_mutations: usize,
    /// Mutations at the focus point.
    pub end_mutations: usize,
    /// Most calls in a test.
    pub max_length: usize,
}

impl Default for MioConfig {
    fn default() -> Self {
        MioConfig {
            population: 10,
            random_sampling: 0.5,
            focus: 0.5,
            start_mutations: 1,
            end_mutations: 10,
            max_length: 10,
        }
    }
}

impl MioConfig {
    /// Linear interpolation from `start` to `end` over `[0, F]` of the budget
    /// spent, then `end` (EvoMaster's `getExploratoryValue`).
    pub fn anneal(&self, spent: f64, start: f64, end: f64) -> f64 {
        if spent >= self.focus || self.focus <= 0.0 {
            end
        } else {
            start + (spent / self.focus) * (end - start)
        }
    }

    /// Tests kept per uncovered target after `spent` of the budget: n
    /// annealed from `population` down to 1.
    pub fn population_at(&self, spent: f64) -> usize {
        self.anneal(spent, self.population as f64, 1.0)
            .round()
            .max(1.0) as usize
    }
}

/// What the archive needs of a test: its length (shorter tests win ties).
pub trait Length {
    /// Number of calls.
    fn calls(&self) -> usize;
}

/// A test in a population with its heuristic value for that target.
#[derive(Debug, Clone)]
struct Member<T> {
    h: f64,
    test: Arc<T>,
}

/// One target's state.
#[derive(Debug, Clone)]
struct Population<T> {
    covered: bool,
    counter: u32,
    members: Vec<Member<T>>,
    /// Index of the run's exchange that first covered it.
    covered_at: Option<u64>,
}

/// Every target seen, with its population. Generic over the test type: REST
/// tests and GraphQL tests share it ([`crate::generation::test::TestCase`]).
#[derive(Debug)]
pub struct Archive<T> {
    targets: IndexMap<String, Population<T>>,
}

impl<T> Default for Archive<T> {
    fn default() -> Self {
        Archive {
            targets: IndexMap::new(),
        }
    }
}

impl<T: Length> Archive<T> {
    /// Offers `test`, which reached `reached` (target, heuristic in (0, 1]) at
    /// exchange `seq`, with population limit `n`; returns whether anything
    /// improved (a new target, a newly covered one, a better or shorter test).
    pub fn update(&mut self, test: &Arc<T>, reached: &[(String, f64)], n: usize, seq: u64) -> bool {
        let mut improved = false;
        for (target, h) in reached {
            let pop = self.targets.entry(target.clone()).or_insert_with(|| {
                improved = true;
                Population {
                    covered: false,
                    counter: 0,
                    members: Vec::new(),
                    covered_at: None,
                }
            });
            let better = offer(pop, test, *h, n.max(1), seq);
            if better {
                pop.counter = 0;
                improved = true;
            }
        }
        improved
    }

    /// A test to mutate: from the target sampled least since its last
    /// improvement, uncovered ones first among equals.
    ///
    /// EvoMaster samples only uncovered targets while there are any; its
    /// white-box runs have thousands. A black-box run has a few dozen, some
    /// infeasible (a status the server never gives), and mutating only their
    /// tests would starve the rest; the counters already steer away from
    /// targets that stopped improving, so every target competes.
    pub fn sample(&mut self, rng: &mut Rng64) -> Option<Arc<T>> {
        let i = self
            .targets
            .iter()
            .enumerate()
            .filter(|(_, (_, p))| !p.members.is_empty())
            .min_by_key(|(i, (_, p))| (p.counter, p.covered, *i))
            .map(|(i, _)| i)?;
        let (_, pop) = self.targets.get_index_mut(i)?;
        pop.counter += 1;
        let k = rng.random_range(0..pop.members.len());
        Some(pop.members[k].test.clone())
    }

    /// Targets covered, in the order first seen.
    pub fn covered(&self) -> impl Iterator<Item = (&str, u64)> {
        self.targets
            .iter()
            .filter_map(|(t, p)| p.covered_at.map(|s| (t.as_str(), s)))
    }

    /// Number of covered targets.
    pub fn covered_count(&self) -> usize {
        self.targets.values().filter(|p| p.covered).count()
    }

    /// Number of targets seen.
    pub fn target_count(&self) -> usize {
        self.targets.len()
    }

    /// The final suite: each covered target's test, once, with the targets
    /// it covers.
    pub fn suite(&self) -> Vec<(Arc<T>, Vec<String>)> {
        let mut out: Vec<(Arc<T>, Vec<String>)> = Vec::new();
        for (target, p) in self.targets.iter().filter(|(_, p)| p.covered) {
            let Some(m) = p.members.first() else { continue };
            match out
                .iter_mut()
                .find(|(t, _)| std::sync::Arc::ptr_eq(t, &m.test))
            {
                Some((_, targets)) => targets.push(target.clone()),
                None => out.push((m.test.clone(), vec![target.clone()])),
            }
        }
        out
    }
}

/// Offers one test to one population; returns whether it improved it.
fn offer<T: Length>(pop: &mut Population<T>, test: &Arc<T>, h: f64, n: usize, seq: u64) -> bool {
    if pop.covered {
        // A covered target keeps one test: the shortest.
        let current = &pop.members[0];
        if h >= 1.0 && test.calls() < current.test.calls() {
            pop.members[0] = Member {
                h,
                test: test.clone(),
            };
            return true;
        }
        return false;
    }
    if h >= 1.0 {
        pop.covered = true;
        pop.covered_at = Some(seq);
        pop.members = vec![Member {
            h,
            test: test.clone(),
        }];
        return true;
    }
    let best = pop.members.iter().map(|m| m.h).fold(0.0, f64::max);
    if pop.members.len() < n {
        pop.members.push(Member {
            h,
            test: test.clone(),
        });
        return h > best;
    }
    // Full: the worst (lowest h, then longest) gives way to one at least as good.
    let worst = pop
        .members
        .iter()
        .enumerate()
        .min_by(|(_, a), (_, b)| {
            a.h.total_cmp(&b.h)
                .then(b.test.calls().cmp(&a.test.calls()))
        })
        .map(|(i, _)| i)
        .unwrap_or(0);
    let w = &pop.members[worst];
    if h > w.h || (h == w.h && test.calls() <= w.test.calls()) {
        pop.members[worst] = Member {
            h,
            test: test.clone(),
        };
        while pop.members.len() > n {
            pop.members.remove(worst.min(pop.members.len() - 1));
        }
        return h > best;
    }
    false
}

#[cfg(test)]
mod tests {

    use rand::SeedableRng;

    use super::*;
    use crate::generation::test::{Call, Sampler, SharedTest, TestCase};

    fn test(len: usize) -> SharedTest<()> {
        let call = Call::of(0, ());
        Arc::new(TestCase {
            calls: vec![call; len],
            groups: vec![],
            sampler: Sampler::Random,
            seed: len as u64,
        })
    }

    #[test]
    fn covered_targets_keep_the_shortest_test() {
        let mut a = Archive::default();
        let long = test(5);
        assert!(a.update(&long, &[("t".into(), 1.0)], 10, 0));
        assert!(!a.update(&test(6), &[("t".into(), 1.0)], 10, 1));
        let short = test(2);
        assert!(a.update(&short, &[("t".into(), 1.0)], 10, 2));
        assert_eq!(a.suite().len(), 1);
        assert!(Arc::ptr_eq(&a.suite()[0].0, &short));
        assert_eq!(a.suite()[0].1, vec!["t".to_string()]);
        assert_eq!(a.covered().next(), Some(("t", 0)));
    }

    #[test]
    fn populations_are_capped_and_sampling_prefers_the_least_sampled_uncovered_target() {
        let mut a = Archive::default();
        for k in 0..15 {
            a.update(
                &test(k + 1),
                &[("u".into(), 0.5), ("v".into(), 0.2)],
                10,
                k as u64,
            );
        }
        assert_eq!(a.targets["u"].members.len(), 10);
        let mut rng = Rng64::seed_from_u64(1);
        a.sample(&mut rng);
        a.sample(&mut rng);
        // u sampled first (tie broken by order), then v; counters are now equal.
        assert_eq!(a.targets["u"].counter, 1);
        assert_eq!(a.targets["v"].counter, 1);
        assert!(
            a.update(&test(1), &[("v".into(), 0.3)], 10, 20),
            "a better h improves"
        );
        assert_eq!(a.targets["v"].counter, 0);
        assert_eq!(a.covered_count(), 0);
    }

    #[test]
    fn annealing_is_linear_until_the_focus_point() {
        let c = MioConfig::default();
        assert_eq!(c.anneal(0.0, 1.0, 10.0), 1.0);
        assert_eq!(c.anneal(0.25, 1.0, 10.0), 5.5);
        assert_eq!(c.anneal(0.7, 1.0, 10.0), 10.0);
    }
}
