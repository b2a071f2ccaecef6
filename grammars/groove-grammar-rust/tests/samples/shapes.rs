//! Geometry helpers used by the sample tests.
//! Written for GrooveSeek's tests (MIT, like the rest of the repository).

use std::fmt;

/// The largest side length a shape may have.
const MAX_SIDE: f64 = 1.0e6;

/// A rectangle given by its width and height.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect {
    pub width: f64,
    pub height: f64,
}

// This comment is separated by a blank line, so it describes the file, not Circle.

/// A circle given by its radius.
pub struct Circle {
    pub radius: f64,
}

/// Anything with an area.
pub trait Shape {
    fn area(&self) -> f64;
}

impl Rect {
    /// Builds a rectangle, clamping each side to `MAX_SIDE`.
    pub fn new(width: f64, height: f64) -> Self {
        Rect { width: width.min(MAX_SIDE), height: height.min(MAX_SIDE) }
    }

    /// True when both sides are equal.
    pub fn is_square(&self) -> bool {
        (self.width - self.height).abs() < f64::EPSILON
    }
}

impl Circle {
    /// Builds a circle, clamping the radius to `MAX_SIDE`.
    pub fn new(radius: f64) -> Self {
        Circle { radius: radius.min(MAX_SIDE) }
    }
}

impl Shape for Rect {
    fn area(&self) -> f64 {
        self.width * self.height
    }
}

impl Shape for Circle {
    fn area(&self) -> f64 {
        std::f64::consts::PI * self.radius * self.radius
    }
}

impl fmt::Display for Rect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.width, self.height)
    }
}

/// Shapes ordered by area, largest first.
pub enum Ordering {
    Largest,
    Smallest,
}

/// Sums the areas of every shape in `shapes`.
pub fn total_area(shapes: &[&dyn Shape]) -> f64 {
    shapes.iter().map(|s| s.area()).sum()
}

pub mod units {
    /// Converts centimetres to inches.
    pub fn cm_to_inches(cm: f64) -> f64 {
        cm / 2.54
    }
}

macro_rules! square {
    ($side:expr) => {
        Rect::new($side, $side)
    };
}
