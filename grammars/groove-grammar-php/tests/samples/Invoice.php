<?php
// Invoice model written for GrooveSeek's tests (MIT, like the repository).

namespace Shop\Billing;

const DEFAULT_CURRENCY = 'EUR';

interface Payable
{
    public function amountDue(): int;
}

/**
 * An invoice with line items, totals in cents.
 */
class Invoice implements Payable
{
    public $number, $customer;

    /** @var array<int, int> line totals in cents */
    private array $lines = [];

    /**
     * Adds a line item and returns the new total.
     */
    public function addLine(int $cents): int
    {
        $this->lines[] = $cents;
        return $this->amountDue();
    }

    public function amountDue(): int
    {
        return array_sum($this->lines);
    }
}

/**
 * Formats an amount in cents as a currency string.
 */
function format_cents(int $cents, string $currency = DEFAULT_CURRENCY): string
{
    return sprintf('%s %.2f', $currency, $cents / 100);
}
