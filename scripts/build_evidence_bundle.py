"""Build the demonstration evidence bundle `data/evidence_demo/` from BANKING77, byte for byte the same every run.

A demonstration of the evidence bundle format (docs/evidence_bundle.md), not a benchmark: the tasks,
their requirements and the judges are simulated from BANKING77's intent labels.

    python scripts/build_evidence_bundle.py                 # writes data/evidence_demo/
    python scripts/build_evidence_bundle.py --out /tmp/x    # somewhere else

Inputs: data/banking77/train.csv (`text,category`), categories.json and LICENSE (CC-BY-4.0).
Outputs: tasks.jsonl, documents.jsonl, pool-key.json, judgments.jsonl, LICENSE (a copy) and SOURCE.md
(how the files were made, with the SHA-256 of every input and output). Only the standard library is
used, and randomness only through `random.Random(seed).random()`, whose sequence Python guarantees.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from random import Random

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "banking77"
OUT = ROOT / "data" / "evidence_demo"

POOL_SEED = 770048  # draws the pool members
JUDGE_B_SEED = 770049  # draws the pairs on which judge B disagrees
PER_REQUIREMENT_INTENT = 3  # pooled messages per requirement intent
PER_NEAR_MISS_INTENT = 2  # pooled messages per near-miss intent
DISAGREEMENT = 0.15  # share of pairs (in expectation) on which judge B departs from judge A
REQUIREMENT_GRADE = 3  # judge A's grade of a message whose intent is a requirement's intent
NEAR_MISS_GRADE = 1  # ... and of a message whose intent is one of the task's near-miss intents
FILES = ("tasks.jsonl", "documents.jsonl", "pool-key.json", "judgments.jsonl", "LICENSE")


@dataclass(frozen=True)
class Requirement:
    """One plain-language requirement, tied to the BANKING77 intent whose messages satisfy it."""

    text: str
    intent: str


@dataclass(frozen=True)
class TaskSpec:
    """A hand-written task: a question, its requirements and two near-miss intents (related, not asked)."""

    question: str
    requirements: tuple[Requirement, ...]
    near_misses: tuple[str, str]


R = Requirement
TASKS: tuple[TaskSpec, ...] = (
    TaskSpec(  # T01
        "My new card hasn't arrived after two weeks; how long should delivery take and what can I do now?",
        (R("How long delivery of a new card normally takes", "card_delivery_estimate"),
         R("What to do when an ordered card has still not arrived", "card_arrival")),
        ("order_physical_card", "get_physical_card"),
    ),
    TaskSpec(  # T02
        "My card finally came; how do I start using it and connect it to the app?",
        (R("How to activate a newly received card", "activate_my_card"),
         R("How to link the card to the app or the account", "card_linking"),
         R("How to set or change the card's PIN", "change_pin"),
         R("How to add the card to Apple Pay or Google Pay", "apple_pay_or_google_pay")),
        ("card_arrival", "get_physical_card"),
    ),
    TaskSpec(  # T03
        "My wallet was stolen with my card inside; what should I do right away?",
        (R("How to report a lost or stolen card", "lost_or_stolen_card"),
         R("What to do when someone else may be using the card", "compromised_card"),
         R("How to get a replacement card", "getting_spare_card"),
         R("How to dispute payments the thief made with the card", "card_payment_not_recognised"),
         R("How long the replacement card takes to arrive", "card_delivery_estimate")),
        ("lost_or_stolen_phone", "card_swallowed"),
    ),
    TaskSpec(  # T04
        "The cash machine kept my card; how do I get it back or get a new one?",
        (R("What to do when an ATM keeps the card", "card_swallowed"),
         R("How to order a new physical card", "order_physical_card")),
        ("atm_support", "lost_or_stolen_card"),
    ),
    TaskSpec(  # T05
        "My card expires next month; will I get a new one automatically and how long will it take?",
        (R("What happens when a card is about to expire", "card_about_to_expire"),
         R("How long delivery of the new card takes", "card_delivery_estimate"),
         R("How to order a new card if none comes automatically", "order_physical_card")),
        ("activate_my_card", "card_arrival"),
    ),
    TaskSpec(  # T06
        "My card stopped working in shops, even for tap payments; what could be wrong?",
        (R("Why a card may stop working altogether", "card_not_working"),
         R("Why contactless payments fail", "contactless_not_working"),
         R("Why a card payment is declined", "declined_card_payment"),
         R("What to do when the PIN is blocked", "pin_blocked"),
         R("Whether the shop accepts this kind of card", "card_acceptance")),
        ("virtual_card_not_working", "apple_pay_or_google_pay"),
    ),
    TaskSpec(  # T07
        "I typed the wrong PIN too many times; how do I unblock it and choose a new one?",
        (R("How to unblock a blocked PIN", "pin_blocked"),
         R("How to change the PIN", "change_pin")),
        ("passcode_forgotten", "card_not_working"),
    ),
    TaskSpec(  # T08
        "I forgot my app passcode and I have a new phone; how do I get back into my account?",
        (R("How to reset a forgotten app passcode", "passcode_forgotten"),
         R("What to do about the account when the old phone is lost or replaced", "lost_or_stolen_phone"),
         R("How to prove who I am to regain access", "verify_my_identity")),
        ("pin_blocked", "unable_to_verify_identity"),
    ),
    TaskSpec(  # T09
        "Which cards can I use to top up, and will I pay a fee for topping up by card?",
        (R("How to top up with a debit or credit card", "topping_up_by_card"),
         R("Whether topping up by card costs a fee", "top_up_by_card_charge"),
         R("Which cards and currencies are supported", "supported_cards_and_currencies")),
        ("top_up_by_bank_transfer_charge", "top_up_limits"),
    ),
    TaskSpec(  # T10
        "My top-up is still pending and an earlier one was reversed; what is going on?",
        (R("Why a top-up stays pending", "pending_top_up"),
         R("Why a top-up was reverted", "top_up_reverted"),
         R("Why a top-up can fail", "top_up_failed"),
         R("Whether a top-up limit stopped the money", "top_up_limits")),
        ("verify_top_up", "balance_not_updated_after_bank_transfer"),
    ),
    TaskSpec(  # T11
        "How can I add money by bank transfer or with cash, and is there a fee?",
        (R("How to move money into the account from another bank", "transfer_into_account"),
         R("Whether a top-up by bank transfer costs a fee", "top_up_by_bank_transfer_charge"),
         R("Whether cash or cheques can be used to top up", "top_up_by_cash_or_cheque")),
        ("topping_up_by_card", "receiving_money"),
    ),
    TaskSpec(  # T12
        "I want my balance topped up automatically; how does that work and what are the limits?",
        (R("How automatic top-up works", "automatic_top_up"),
         R("What limits apply to top-ups", "top_up_limits")),
        ("topping_up_by_card", "pending_top_up"),
    ),
    TaskSpec(  # T13
        "Why does the app ask me to verify a top-up, and what happens if the top-up fails?",
        (R("Why a top-up has to be verified", "verify_top_up"),
         R("What happens when a top-up fails", "top_up_failed"),
         R("Which cards can be used to top up", "topping_up_by_card")),
        ("verify_my_identity", "pending_top_up"),
    ),
    TaskSpec(  # T14
        "I sent money to a friend but they have not received it; what should I check?",
        (R("What to do when the recipient has not received the money", "transfer_not_received_by_recipient"),
         R("How long transfers take to arrive", "transfer_timing"),
         R("Why a transfer stays pending", "pending_transfer"),
         R("Whether the transfer failed and the money came back", "failed_transfer")),
        ("receiving_money", "cancel_transfer"),
    ),
    TaskSpec(  # T15
        "Can I still cancel a transfer I sent to the wrong person, and will the money come back?",
        (R("How to cancel a transfer", "cancel_transfer"),
         R("What happens to the money of a failed or returned transfer", "failed_transfer")),
        ("declined_transfer", "beneficiary_not_allowed"),
    ),
    TaskSpec(  # T16
        "My transfer was declined and I cannot add the payee; why, and was I charged for it?",
        (R("Why a transfer is declined", "declined_transfer"),
         R("Why a beneficiary cannot be added", "beneficiary_not_allowed"),
         R("Whether a fee was charged for the transfer", "transfer_fee_charged")),
        ("failed_transfer", "cancel_transfer"),
    ),
    TaskSpec(  # T17
        "I was charged a fee on a transfer in another currency; how are transfer fees worked out?",
        (R("When and why a transfer is charged a fee", "transfer_fee_charged"),
         R("What fee applies when money is exchanged into another currency", "exchange_charge")),
        ("card_payment_fee_charged", "top_up_by_bank_transfer_charge"),
    ),
    TaskSpec(  # T18
        "Someone wants to pay me from abroad; how do I receive the money and how long does it take?",
        (R("How to receive money into the account", "receiving_money"),
         R("How long incoming transfers take", "transfer_timing"),
         R("Which currencies the account can hold and receive", "fiat_currency_support"),
         R("What to do when a received transfer is not in the balance", "balance_not_updated_after_bank_transfer")),
        ("transfer_into_account", "exchange_via_app"),
    ),
    TaskSpec(  # T19
        "I deposited a cheque and made a bank transfer, but my balance has not changed; why?",
        (R("Why a cheque or cash deposit is not in the balance yet",
           "balance_not_updated_after_cheque_or_cash_deposit"),
         R("Why a bank transfer is not in the balance yet", "balance_not_updated_after_bank_transfer")),
        ("pending_transfer", "top_up_by_cash_or_cheque"),
    ),
    TaskSpec(  # T20
        "I see a card payment I don't recognise and a direct debit I never set up; what should I do?",
        (R("What to do about a card payment I did not make", "card_payment_not_recognised"),
         R("What to do about a direct debit I do not recognise", "direct_debit_payment_not_recognised"),
         R("How to protect the card if it may be compromised", "compromised_card"),
         R("How to get the money back", "request_refund")),
        ("extra_charge_on_statement", "transaction_charged_twice"),
    ),
    TaskSpec(  # T21
        "My statement shows an extra charge and a fee on a card payment; where do they come from?",
        (R("Why an unexpected extra charge appears on the statement", "extra_charge_on_statement"),
         R("Why a card payment was charged a fee", "card_payment_fee_charged"),
         R("What to do if I do not recognise the charge at all", "card_payment_not_recognised")),
        ("transaction_charged_twice", "exchange_charge"),
    ),
    TaskSpec(  # T22
        "A card payment has been pending for days and another one was reversed; when will they settle?",
        (R("Why a card payment stays pending", "pending_card_payment"),
         R("Why a card payment was reverted", "reverted_card_payment?")),
        ("pending_transfer", "transaction_charged_twice"),
    ),
    TaskSpec(  # T23
        "My card was charged twice for one purchase and I also can't see a refund; what should I check?",
        (R("What to do when one purchase was charged twice", "transaction_charged_twice"),
         R("Why a refund may not appear on the account yet", "Refund_not_showing_up"),
         R("How to ask for a refund", "request_refund"),
         R("Whether the second charge is only a pending payment", "pending_card_payment")),
        ("reverted_card_payment?", "extra_charge_on_statement"),
    ),
    TaskSpec(  # T24
        "How do I get a refund for something I returned, and how long until I see it?",
        (R("How to ask for a refund", "request_refund"),
         R("Why a refund may take time to appear", "Refund_not_showing_up")),
        ("reverted_card_payment?", "card_payment_not_recognised"),
    ),
    TaskSpec(  # T25
        "I paid abroad and the exchange rate looks wrong; how are rates and exchange fees set?",
        (R("What to do when a card payment used the wrong exchange rate", "card_payment_wrong_exchange_rate"),
         R("How the exchange rate is determined", "exchange_rate"),
         R("What fee applies to a currency exchange", "exchange_charge"),
         R("Whether exchanging money in the app beforehand helps", "exchange_via_app")),
        ("wrong_exchange_rate_for_cash_withdrawal", "card_payment_fee_charged"),
    ),
    TaskSpec(  # T26
        "Can I exchange money in the app, which currencies are supported, and what does it cost?",
        (R("How to exchange currencies in the app", "exchange_via_app"),
         R("Which currencies the account supports", "fiat_currency_support"),
         R("What fee applies to a currency exchange", "exchange_charge"),
         R("How the exchange rate is determined", "exchange_rate"),
         R("What to do if a payment used a different rate than expected", "card_payment_wrong_exchange_rate")),
        ("supported_cards_and_currencies", "wrong_exchange_rate_for_cash_withdrawal"),
    ),
    TaskSpec(  # T27
        "An ATM abroad gave me a poor exchange rate and charged me a fee; why?",
        (R("Why a cash withdrawal used the wrong exchange rate", "wrong_exchange_rate_for_cash_withdrawal"),
         R("Why a cash withdrawal was charged a fee", "cash_withdrawal_charge"),
         R("Where and how the card can be used at ATMs", "atm_support")),
        ("card_payment_wrong_exchange_rate", "exchange_rate"),
    ),
    TaskSpec(  # T28
        "The cash machine gave me less money than I asked for and the withdrawal is still pending; what now?",
        (R("What to do when an ATM dispensed the wrong amount of cash", "wrong_amount_of_cash_received"),
         R("Why a cash withdrawal stays pending", "pending_cash_withdrawal")),
        ("declined_cash_withdrawal", "cash_withdrawal_not_recognised"),
    ),
    TaskSpec(  # T29
        "My cash withdrawal was declined, and there is a withdrawal I did not make; what should I do?",
        (R("Why a cash withdrawal is declined", "declined_cash_withdrawal"),
         R("What to do about a cash withdrawal I did not make", "cash_withdrawal_not_recognised"),
         R("How to protect the card if it may be compromised", "compromised_card"),
         R("How to report the card as stolen", "lost_or_stolen_card")),
        ("pending_cash_withdrawal", "card_swallowed"),
    ),
    TaskSpec(  # T30
        "How much does it cost to take out cash, and which ATMs can I use?",
        (R("What fee a cash withdrawal costs", "cash_withdrawal_charge"),
         R("Which ATMs the card works at", "atm_support"),
         R("Why a cash withdrawal may be declined", "declined_cash_withdrawal")),
        ("wrong_exchange_rate_for_cash_withdrawal", "card_payment_fee_charged"),
    ),
    TaskSpec(  # T31
        "I want a virtual card for shopping online; how do I get one, and what are disposable cards?",
        (R("How to get a virtual card", "getting_virtual_card"),
         R("How to get a disposable virtual card", "get_disposable_virtual_card"),
         R("What limits apply to disposable cards", "disposable_card_limits")),
        ("virtual_card_not_working", "getting_spare_card"),
    ),
    TaskSpec(  # T32
        "My virtual card is rejected when I pay online; why, and where are cards accepted?",
        (R("Why a virtual card does not work", "virtual_card_not_working"),
         R("Where the card is accepted", "card_acceptance"),
         R("Why a card payment is declined", "declined_card_payment")),
        ("card_not_working", "getting_virtual_card"),
    ),
    TaskSpec(  # T33
        "Can I add my card to Apple Pay or Google Pay, and is it a Visa or a Mastercard?",
        (R("How to use the card with Apple Pay or Google Pay", "apple_pay_or_google_pay"),
         R("Whether the card is Visa or Mastercard", "visa_or_mastercard")),
        ("card_linking", "supported_cards_and_currencies"),
    ),
    TaskSpec(  # T34
        "I'm moving abroad; can I keep using the account there, and which currencies can I hold?",
        (R("In which countries the service is available", "country_support"),
         R("Which currencies the account can hold", "fiat_currency_support"),
         R("Which cards and currencies are supported for top-ups", "supported_cards_and_currencies"),
         R("How to update my address", "edit_personal_details"),
         R("Whether I can withdraw cash at ATMs in the new country", "atm_support")),
        ("exchange_via_app", "visa_or_mastercard"),
    ),
    TaskSpec(  # T35
        "Why do you need to verify my identity, and what can I do if the check keeps failing?",
        (R("Why identity verification is needed", "why_verify_identity"),
         R("How to verify my identity", "verify_my_identity"),
         R("What to do when identity verification fails", "unable_to_verify_identity")),
        ("verify_source_of_funds", "verify_top_up"),
    ),
    TaskSpec(  # T36
        "The bank asked where my money comes from; why, and how do I prove my identity?",
        (R("Why and how to show the source of my funds", "verify_source_of_funds"),
         R("Why identity verification is needed", "why_verify_identity"),
         R("How to verify my identity", "verify_my_identity")),
        ("unable_to_verify_identity", "edit_personal_details"),
    ),
    TaskSpec(  # T37
        "Can my 15-year-old open an account, and what details do we need to give?",
        (R("The minimum age for an account", "age_limit"),
         R("How identity is verified when opening an account", "verify_my_identity"),
         R("How to enter or change personal details", "edit_personal_details"),
         R("Whether the account is available in our country", "country_support")),
        ("why_verify_identity", "unable_to_verify_identity"),
    ),
    TaskSpec(  # T38
        "I changed my name and address; how do I update my details and get a card with my new name?",
        (R("How to update personal details", "edit_personal_details"),
         R("How to order a new physical card", "order_physical_card"),
         R("Whether the new details have to be verified", "verify_my_identity")),
        ("why_verify_identity", "change_pin"),
    ),
    TaskSpec(  # T39
        "I want to close my account; how do I do it and will moving my money out cost anything?",
        (R("How to close the account", "terminate_account"),
         R("Whether sending the remaining money out is charged a fee", "transfer_fee_charged")),
        ("edit_personal_details", "cancel_transfer"),
    ),
    TaskSpec(  # T40
        "I need an extra card for my partner; how do I get a spare card and how soon can it be used?",
        (R("How to get an additional card", "getting_spare_card"),
         R("How long card delivery takes", "card_delivery_estimate"),
         R("How to activate the card once it arrives", "activate_my_card"),
         R("How to link the new card to the account", "card_linking")),
        ("order_physical_card", "getting_virtual_card"),
    ),
    TaskSpec(  # T41
        "My phone was stolen; how do I protect my account and my card?",
        (R("What to do about the account when the phone is lost or stolen", "lost_or_stolen_phone"),
         R("How to protect a card that may be compromised", "compromised_card"),
         R("How to report the card lost or stolen", "lost_or_stolen_card"),
         R("How to reset the app passcode on a new phone", "passcode_forgotten"),
         R("How to get a replacement card", "getting_spare_card")),
        ("card_swallowed", "terminate_account"),
    ),
    TaskSpec(  # T42
        "I was charged fees for a card payment and for topping up; why, and how can I avoid them?",
        (R("Why a card payment was charged a fee", "card_payment_fee_charged"),
         R("Why topping up by card costs a fee", "top_up_by_card_charge"),
         R("Whether topping up by bank transfer avoids the fee", "top_up_by_bank_transfer_charge"),
         R("Whether a currency exchange fee was part of the charges", "exchange_charge")),
        ("extra_charge_on_statement", "transfer_fee_charged"),
    ),
    TaskSpec(  # T43
        "A shop refused my card and an online payment was declined; what can I do?",
        (R("Where the card is accepted", "card_acceptance"),
         R("Why a card payment is declined", "declined_card_payment"),
         R("What to do when the card does not work", "card_not_working")),
        ("contactless_not_working", "virtual_card_not_working"),
    ),
    TaskSpec(  # T44
        "I'm travelling next week; what should I know about paying and taking out cash abroad?",
        (R("In which countries the card and account can be used", "country_support"),
         R("Which ATMs the card works at", "atm_support"),
         R("How the exchange rate is determined", "exchange_rate"),
         R("What fee a cash withdrawal costs", "cash_withdrawal_charge"),
         R("What to do if a payment abroad uses the wrong exchange rate", "card_payment_wrong_exchange_rate")),
        ("exchange_via_app", "fiat_currency_support"),
    ),
    TaskSpec(  # T45
        "My salary transfer hasn't arrived and shows as pending; when will the money be in my balance?",
        (R("Why an incoming transfer stays pending", "pending_transfer"),
         R("Why a bank transfer is not in the balance yet", "balance_not_updated_after_bank_transfer"),
         R("How long transfers take to arrive", "transfer_timing"),
         R("How money from another bank reaches the account", "transfer_into_account")),
        ("transfer_not_received_by_recipient", "pending_top_up"),
    ),
    TaskSpec(  # T46
        "I need to pay with a card now; can I use a virtual card while the physical one is on its way?",
        (R("How to get a virtual card", "getting_virtual_card"),
         R("How to get a physical card", "get_physical_card"),
         R("What to do while the ordered card has not arrived", "card_arrival"),
         R("How long card delivery takes", "card_delivery_estimate"),
         R("How to activate the physical card when it comes", "activate_my_card")),
        ("get_disposable_virtual_card", "order_physical_card"),
    ),
    TaskSpec(  # T47
        "A direct debit I did not expect went out and a transfer bounced back; what should I do?",
        (R("What to do about a direct debit I do not recognise", "direct_debit_payment_not_recognised"),
         R("What happens to the money of a failed transfer", "failed_transfer"),
         R("How to ask for money back", "request_refund")),
        ("cancel_transfer", "card_payment_not_recognised"),
    ),
    TaskSpec(  # T48
        "What limits apply to disposable cards and to top-ups, and what fees apply to card payments?",
        (R("What limits apply to disposable cards", "disposable_card_limits"),
         R("What limits apply to top-ups", "top_up_limits"),
         R("When card payments are charged a fee", "card_payment_fee_charged")),
        ("get_disposable_virtual_card", "automatic_top_up"),
    ),
)  # fmt: skip


@dataclass(frozen=True)
class Message:
    """A BANKING77 training message: its 0-based data row in train.csv, text and intent."""

    row: int
    text: str
    intent: str

    @property
    def doc_id(self) -> str:
        return f"b77-{self.row:05d}"


@dataclass(frozen=True)
class Judgment:
    task_id: str
    doc_id: str
    judge: str
    grade: int
    obligations: tuple[int, ...]


def task_id(index: int) -> str:
    """T01 .. T48 for the 0-based position in TASKS."""
    return f"T{index + 1:02d}"


def split(index: int) -> str:
    """Every fourth task (T04, T08, ..., T48) is development: 12 development and 36 final tasks."""
    return "development" if (index + 1) % 4 == 0 else "final"


def read_messages(data: Path) -> list[Message]:
    """train.csv's messages, after checking every task names only intents listed in categories.json."""
    intents = set(json.loads((data / "categories.json").read_text(encoding="utf-8")))
    for index, spec in enumerate(TASKS):
        named = [r.intent for r in spec.requirements] + list(spec.near_misses)
        unknown = [intent for intent in named if intent not in intents]
        if unknown or len(set(named)) != len(named) or not 2 <= len(spec.requirements) <= 5:
            raise ValueError(f"task {task_id(index)}: unknown or repeated intents, or not 2-5 requirements: {named}")
    with (data / "train.csv").open(newline="", encoding="utf-8") as handle:
        return [Message(row, record["text"], record["category"]) for row, record in enumerate(csv.DictReader(handle))]


def draw_pools(messages: list[Message]) -> list[list[Message]]:
    """Each task's pool: for every requirement intent, then every near-miss intent, in the order the task
    lists them, one `random()` per message of that intent (in train.csv order); the messages with the
    smallest draws are taken (3 per requirement intent, 2 per near-miss intent). A pool is sorted by doc_id.
    """
    by_intent: dict[str, list[Message]] = {}
    for message in messages:
        by_intent.setdefault(message.intent, []).append(message)
    rng = Random(POOL_SEED)
    pools = []
    for spec in TASKS:
        wanted = [(r.intent, PER_REQUIREMENT_INTENT) for r in spec.requirements]
        wanted += [(intent, PER_NEAR_MISS_INTENT) for intent in spec.near_misses]
        pool: list[Message] = []
        for intent, count in wanted:
            draws = sorted((rng.random(), m.row, m) for m in by_intent[intent])
            pool.extend(m for _, _, m in draws[:count])
        pools.append(sorted(pool, key=lambda m: m.doc_id))
    return pools


def judge_a(spec: TaskSpec, message: Message) -> tuple[int, tuple[int, ...]]:
    """Judge A reads the intent: a requirement's intent gives grade 3 and that requirement as the
    obligation; a near-miss intent gives grade 1 and no obligation."""
    for index, requirement in enumerate(spec.requirements):
        if message.intent == requirement.intent:
            return REQUIREMENT_GRADE, (index,)
    return NEAR_MISS_GRADE, ()


def judge(pools: list[list[Message]]) -> list[Judgment]:
    """Both judges for every pooled pair (tasks in order, pools in doc_id order; A's line, then B's).

    Judge B agrees with A, except on the pairs where a `random()` draw of its own generator (one per
    pair, in the same order) is below 0.15: there B grades one lower than A (never below 0) and lists
    no obligations.
    """
    rng = Random(JUDGE_B_SEED)
    judgments = []
    for index, (spec, pool) in enumerate(zip(TASKS, pools)):
        for message in pool:
            grade, obligations = judge_a(spec, message)
            judgments.append(Judgment(task_id(index), message.doc_id, "A", grade, obligations))
            if rng.random() < DISAGREEMENT:
                grade, obligations = max(grade - 1, 0), ()
            judgments.append(Judgment(task_id(index), message.doc_id, "B", grade, obligations))
    return judgments


def json_line(record: dict) -> str:
    return json.dumps(record, ensure_ascii=False) + "\n"


def render_files(pools: list[list[Message]], judgments: list[Judgment]) -> dict[str, str]:
    """The text of tasks.jsonl, documents.jsonl, pool-key.json and judgments.jsonl."""
    tasks = "".join(
        json_line({"task_id": task_id(i), "question": spec.question,
                   "requirements": [r.text for r in spec.requirements], "split": split(i)})
        for i, spec in enumerate(TASKS)
    )  # fmt: skip
    documents = {m.row: m for pool in pools for m in pool}
    docs = "".join(json_line({"doc_id": m.doc_id, "text": m.text}) for _, m in sorted(documents.items()))
    entries = [f"  {json.dumps(task_id(i))}: {json.dumps([m.doc_id for m in pool])}" for i, pool in enumerate(pools)]
    pool_key = "{\n" + ",\n".join(entries) + "\n}\n"
    lines = "".join(
        json_line({"task_id": j.task_id, "doc_id": j.doc_id, "judge": j.judge, "grade": j.grade,
                   "obligations": list(j.obligations)})
        for j in judgments
    )  # fmt: skip
    return {"tasks.jsonl": tasks, "documents.jsonl": docs, "pool-key.json": pool_key, "judgments.jsonl": lines}


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def render_source(data: Path, out: Path, pools: list[list[Message]], judgments: list[Judgment]) -> str:
    """SOURCE.md: what the bundle is, how it was made, its counts and the SHA-256 of every file."""
    sizes = Counter(len(spec.requirements) for spec in TASKS)
    requirement_counts = ", ".join(f"{n} tasks with {k}" for k, n in sorted(sizes.items()))
    requirements = sum(k * n for k, n in sizes.items())
    development = sum(split(i) == "development" for i in range(len(TASKS)))
    pool_sizes = [len(pool) for pool in pools]
    pool_range = f"{min(pool_sizes)} to {max(pool_sizes)}"
    documents = len({m.row for pool in pools for m in pool})
    verdicts = {(j.task_id, j.doc_id, j.judge): (j.grade, j.obligations) for j in judgments}
    disagreements = sum(verdicts[t, d, "A"] != verdicts[t, d, "B"] for t, d, judge in verdicts if judge == "A")
    obligations_a = sum(len(j.obligations) for j in judgments if j.judge == "A")
    obligations_b = sum(len(j.obligations) for j in judgments if j.judge == "B")
    inputs = "\n".join(
        f"| data/banking77/{name} | {sha256((data / name).read_bytes())} |"
        for name in ("train.csv", "categories.json", "LICENSE")
    )
    outputs = "\n".join(
        f"| {name} | {(out / name).stat().st_size} | {sha256((out / name).read_bytes())} |" for name in FILES
    )
    task_rows = "\n".join(
        f"| {task_id(i)} | {split(i)} | {', '.join(f'{k}: {r.intent}' for k, r in enumerate(spec.requirements))} "
        f"| {', '.join(spec.near_misses)} | {len(pool)} |"
        for i, (spec, pool) in enumerate(zip(TASKS, pools))
    )
    return f"""# evidence_demo: a demonstration evidence bundle built from BANKING77

A **demonstration** of the evidence bundle format (docs/evidence_bundle.md), **not a benchmark**: the
tasks are hand-written questions about banking topics, every requirement is tied to one BANKING77
intent, and both judges are simulated from the intent labels. It exercises the format, the loaders
and the evidence study end to end; figures measured on it say nothing about real retrieval quality.

Built by `python scripts/build_evidence_bundle.py` (standard library only; running it again gives
identical bytes, which tests/studies/evidence/test_evidence_bundle.py checks). Licence: the messages are BANKING77's
(PolyAI, CC-BY-4.0; `LICENSE` is a verbatim copy of data/banking77/LICENSE). Cite: Casanueva,
Temcinas, Gerz, Henderson, Vulic, "Efficient Intent Detection with Dual Sentence Encoders", NLP for
ConvAI workshop, ACL 2020 (arXiv:2003.04807).

## Inputs

| file | SHA-256 |
| --- | --- |
{inputs}

## Construction

- **Tasks** (`tasks.jsonl`): {len(TASKS)} questions written in the script, ids T01..T{len(TASKS):02d} in script
  order; every fourth (T04, T08, ..., T48) is `development` ({development}), the others `final`
  ({len(TASKS) - development}). Each has 2-5 plain-language requirements ({requirement_counts}; {requirements}
  in all), each tied to one BANKING77 intent, and two near-miss intents: related topics the question
  does not ask about (table below). The intents are not part of the bundle.
- **Documents** (`documents.jsonl`): the {documents} distinct training messages that some pool holds, in
  train.csv order; `doc_id` is `b77-` and the message's 0-based data row in train.csv (five digits),
  `text` the message as written.
- **Pools** (`pool-key.json`): per task, {PER_REQUIREMENT_INTENT} training messages of every requirement intent and
  {PER_NEAR_MISS_INTENT} of each near-miss intent, so 3m + 4 for m requirements: {pool_range} messages,
  {sum(pool_sizes)} (task, document) pairs in all. Drawn with `random.Random({POOL_SEED})`: for each task in
  order, for each of its requirement intents and then its near-miss intents in the listed order, one
  `random()` per training message of that intent (train.csv order); the messages with the smallest
  draws are taken. A message may be pooled for several tasks. Each pool lists its doc_ids in ascending order.
- **Judgments** (`judgments.jsonl`): both judges for every pooled pair, judge A's line first.
  - Judge A reads the intent: a message whose intent is requirement k's intent gets grade {REQUIREMENT_GRADE} and
    obligations `[k]`; a message of a near-miss intent gets grade {NEAR_MISS_GRADE} and `[]`.
  - Judge B (the disagreement rule): the same as A, except on the pairs where a draw of
    `random.Random({JUDGE_B_SEED})` (one `random()` per pair, tasks in order, pools in doc_id order) is
    below {DISAGREEMENT}: there B's grade is A's minus one (never below 0) and B lists no obligations.
  - Here B departs from A on {disagreements} of {sum(pool_sizes)} pairs; A lists {obligations_a} obligations,
    B {obligations_b}. The agreed obligations (both judges name the requirement for the same document) are B's.
- **Vectors**: none; the study encodes questions, requirements and documents with rankhouse's MiniLM
  encoder.
- **Comparators**: the `dense` and `typed` runs are made by the study, not shipped;
  docs/evidence_bundle.md gives the rule for `typed`, which stands in for seed 000's graph comparator.

## Files

| file | bytes | SHA-256 |
| --- | ---: | --- |
{outputs}

## Tasks: requirement intents (index: intent), near-miss intents, pool size

| task | split | requirements | near misses | pool |
| --- | --- | --- | --- | ---: |
{task_rows}
"""


def build(data: Path = DATA, out: Path = OUT) -> dict[str, str]:
    """Write the bundle into `out`; return the SHA-256 of every file written (SOURCE.md included)."""
    messages = read_messages(data)
    pools = draw_pools(messages)
    judgments = judge(pools)
    out.mkdir(parents=True, exist_ok=True)
    for name, text in render_files(pools, judgments).items():
        (out / name).write_bytes(text.encode("utf-8"))
    shutil.copyfile(data / "LICENSE", out / "LICENSE")
    (out / "SOURCE.md").write_bytes(render_source(data, out, pools, judgments).encode("utf-8"))
    return {name: sha256((out / name).read_bytes()) for name in (*FILES, "SOURCE.md")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the BANKING77 directory (train.csv, categories.json)")
    parser.add_argument("--out", type=Path, default=OUT, help="where to write the bundle")
    arguments = parser.parse_args()
    for name, digest in build(arguments.data, arguments.out).items():
        print(f"{digest}  {arguments.out / name}")


if __name__ == "__main__":
    main()
